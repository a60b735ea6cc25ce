package leader

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// scripted is a Proposer that answers from a script keyed by command
// type and records what the loop did, in order.
type scripted struct {
	answers map[string]Answer
	fail    map[string]bool
	book    Book
	trace   []string
}

func (s *scripted) Propose(c Command) (Answer, error) {
	s.trace = append(s.trace, "propose "+c.Type)
	if s.fail[c.Type] {
		return Answer{}, errors.New("no leader")
	}
	return s.answers[c.Type], nil
}

func (s *scripted) Answered(c Command, a Answer) {
	s.trace = append(s.trace, "answered "+c.Type)
	s.book = s.book.Answered(c, a)
}

func (s *scripted) Skipped(c Command) { s.trace = append(s.trace, "skipped "+c.Type) }

func TestCarryOut(t *testing.T) {
	t.Parallel()
	invalid := raftfsm.Code(raftfsm.ErrInvalid)
	place := func(typ string) Command {
		return Command{Type: typ, Body: raftfsm.PlaceJob{ID: 7, Attempt: 2}, Placement: true}
	}
	other := Command{Type: "gc", Body: raftfsm.PurgeJobs{}}
	tests := []struct {
		name    string
		answers map[string]Answer
		fail    map[string]bool
		want    []string
	}{
		{"all taken", nil, nil,
			[]string{"propose p1", "answered p1", "propose p2", "answered p2", "propose gc", "answered gc"}},
		{"refused placement skips the later ones", map[string]Answer{"p1": {Code: invalid, Err: "bad host"}}, nil,
			[]string{"propose p1", "answered p1", "skipped p2", "propose gc", "answered gc"}},
		{"failed proposal has no answer and skips the later placements", nil, map[string]bool{"p1": true},
			[]string{"propose p1", "skipped p2", "propose gc", "answered gc"}},
		{"a failed other command skips nothing", nil, map[string]bool{"gc": true},
			[]string{"propose p1", "answered p1", "propose p2", "answered p2", "propose gc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &scripted{answers: tt.answers, fail: tt.fail}
			CarryOut(s, []Command{place("p1"), place("p2"), other})
			if !slices.Equal(s.trace, tt.want) {
				t.Errorf("trace\n got %q\nwant %q", s.trace, tt.want)
			}
		})
	}
}

func TestBookAnswered(t *testing.T) {
	t.Parallel()
	invalid := raftfsm.Code(raftfsm.ErrInvalid)
	placeCmd := Command{Type: raftfsm.CmdPlaceJob, Body: raftfsm.PlaceJob{ID: 7, Attempt: 2}, Placement: true}
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cycleCmd := Command{Type: raftfsm.CmdSetProbeDuties, Cycle: &CycleStart{Cycle: 4, Start: start, Full: true}}

	b := Book{}.Answered(placeCmd, Answer{})
	if len(b.Jobs.Refused) != 0 {
		t.Errorf("a placement taken is remembered as refused: %v", b.Jobs.Refused)
	}
	b = b.Answered(placeCmd, Answer{Code: invalid, Err: "hosts[0] bad"})
	if r, ok := b.Jobs.Refused[7]; !ok || r.Attempt != 2 || r.Code != invalid || r.Err != "hosts[0] bad" {
		t.Errorf("refused placement not remembered: %+v", b.Jobs.Refused)
	}
	b = b.Answered(cycleCmd, Answer{Code: invalid, Err: "stale cycle"})
	if b.Probes.CycleStart != nil {
		t.Errorf("a refused cycle is recorded: %v", b.Probes.CycleStart)
	}
	b = b.Answered(cycleCmd, Answer{})
	if got := b.Probes.CycleStart[4]; !got.Equal(start) {
		t.Errorf("a cycle taken is not recorded: %v", b.Probes.CycleStart)
	}
}
