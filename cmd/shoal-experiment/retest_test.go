package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// A placement is before the first re-test only when a poll sent after it
// was answered still saw none, after only when a poll answered before it
// was asked had seen one; the re-test arriving while it was asked leaves
// it unknown.
func TestRetestSide(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	for _, tc := range []struct {
		name                              string
		asked, answered, lastMiss, seenAt float64
		want                              string
	}{
		{"no poll yet", 10, 11, math.Inf(-1), inf, ""},
		{"a later poll saw none", 10, 11, 11.2, inf, retestBefore},
		{"the poll before saw none, none since", 10, 11, 9.8, inf, ""},
		{"a poll sent while asked saw none", 10, 11, 10.5, inf, ""},
		{"seen before the ask", 10, 11, 9.8, 9.9, retestAfter},
		{"seen at the ask", 10, 11, 9.8, 10, retestAfter},
		{"seen while asked", 10, 11, 9.8, 11.3, ""},
		{"placed long before the re-test", 10, 11, 40, 41, retestBefore},
	} {
		if got := retestSide(tc.asked, tc.answered, tc.lastMiss, tc.seenAt); got != tc.want {
			t.Errorf("%s: retestSide(%v, %v, %v, %v) = %q, want %q", tc.name, tc.asked, tc.answered, tc.lastMiss, tc.seenAt, got, tc.want)
		}
	}
}

func fptr(v float64) *float64 { return &v }

// The first re-test is the earliest figure of a pair with the changed
// node, either way round, measured after the change and its guard: not
// another pair's, not a latency-only pair's, not one from before.
func TestFirstRetest(t *testing.T) {
	t.Parallel()
	change := time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)
	after := change.Add(retestGuard)
	ps := []api.NetPair{
		{From: "n01", To: "n02", BWMbps: fptr(95), MeasuredAt: change.Add(-time.Minute)},    // before the change
		{From: "n01", To: "n03", BWMbps: fptr(95), MeasuredAt: change.Add(5 * time.Second)}, // another pair
		{From: "n02", To: "n04", RTTms: fptr(0.1), RTTAt: change.Add(3 * time.Second)},      // latency only
		{From: "n02", To: "n05", BWMbps: fptr(50), MeasuredAt: change.Add(time.Second)},     // within the guard
		{From: "n07", To: "n02", BWMbps: fptr(9.6), MeasuredAt: change.Add(40 * time.Second)},
		{From: "n02", To: "n06", BWMbps: fptr(9.5), MeasuredAt: change.Add(31 * time.Second)},
	}
	p, ok := firstRetest(ps, "n02", after)
	if !ok || p.From != "n02" || p.To != "n06" {
		t.Fatalf("firstRetest = %+v, %v; want n02-n06", p, ok)
	}
	if _, ok := firstRetest(ps[:4], "n02", after); ok {
		t.Error("a re-test found among figures from before the change, of other pairs or of latency only")
	}
	w := newRetestWatch("n02", change, 65)
	if w.observe(ps[:4], 70, 70.2) || w.seen() || w.lastMissS != 70 {
		t.Errorf("a poll without a re-test: seen %v, lastMiss %v", w.seen(), w.lastMissS)
	}
	if !w.observe(ps, 80, 80.3) || w.seenS != 80.3 || w.retestPeer() != "n06" || !w.pair.MeasuredAt.Equal(change.Add(31*time.Second)) {
		t.Errorf("the poll with one: seen at %v, peer %s, measured %v", w.seenS, w.retestPeer(), w.pair.MeasuredAt)
	}
	if w.observe(ps, 90, 90.1) || w.seenS != 80.3 {
		t.Error("a later poll moved the first re-test")
	}
	w = newRetestWatch("n07", change, 65)
	if w.observe(ps, 70, 70.1); w.retestPeer() != "n02" {
		t.Errorf("peer of a pair listed from the other end: %s", w.retestPeer())
	}
}

// The experiment's sequence, poll-place-poll per placement, through a
// re-test that lands between two placements and one that lands while a
// placement is asked.
func TestRetestWatchSplitsPlacements(t *testing.T) {
	t.Parallel()
	change := time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return change.Add(time.Duration((s - 60) * float64(time.Second))) }
	none := []api.NetPair{{From: "n02", To: "n03", BWMbps: fptr(95), MeasuredAt: at(10)}}
	// The re-test ends at +100 s; the asker's view holds it from
	// `arrives` on.
	view := func(now, arrives float64) []api.NetPair {
		if now < arrives {
			return none
		}
		return append(none, api.NetPair{From: "n02", To: "n09", BWMbps: fptr(9.7), MeasuredAt: at(100)})
	}
	type placement struct{ asked, answered float64 }
	run := func(arrives float64, ps []placement) []string {
		w := newRetestWatch("n02", change, 60)
		var sides []string
		for _, p := range ps {
			pre, post := p.asked-0.3, p.answered+0.3
			w.observe(view(pre, arrives), pre-0.1, pre)
			w.observe(view(post+0.1, arrives), post, post+0.1)
			sides = append(sides, retestSide(p.asked, p.answered, w.lastMissS, w.seenS))
		}
		return sides
	}
	ps := []placement{{70, 71}, {90, 91}, {110, 111}, {130, 131}}
	if got, want := strings.Join(run(102, ps), ","), "before,before,after,after"; got != want {
		t.Errorf("re-test seen between placements: %s, want %s", got, want)
	}
	if got, want := strings.Join(run(110.5, ps), ","), "before,before,,after"; got != want {
		t.Errorf("re-test seen while a placement was asked: %s, want %s", got, want)
	}
	if got, want := strings.Join(run(1000, ps), ","), "before,before,before,before"; got != want {
		t.Errorf("no re-test: %s, want %s", got, want)
	}
}

// phase1CSV is degrade10's halo runs: phase 0, then phase 1 with netload
// on n02's group before the first re-test and on the new oracle's after,
// and one run of unknown side.
const phase1CSV = `rep,order,policy,hosts,time_s,comm_s,wall_s,model_T,min_avail_mbps,switches,hog_nodes,error,case,kind,phase,app,alloc_s,placed_s,retest
1,1,netload,n01 n02 n03 n04,1.0,0.9,1.5,0.3,100.0,1,0,,degrade10,steady,0,halo,0.100,5.0,
1,2,oracle,n01 n02 n03 n04,1.0,0.9,1.5,0,100.0,1,0,,degrade10,steady,0,halo,0.000,20.0,
1,3,random,n06 n07 n08 n09,3.0,2.9,3.5,0.5,50.0,1,0,,degrade10,steady,0,halo,0.100,30.0,
3,1,netload,n02 n04 n03 n01,8.0,7.9,8.5,0.3,10.0,1,0,,degrade10,steady,1,halo,0.100,70.0,before
3,2,oracle,n01 n03 n04 n05,1.2,1.1,1.5,0,80.0,1,0,,degrade10,steady,1,halo,0.000,80.0,before
3,3,random,n06 n07 n08 n09,5.0,4.9,5.5,0.5,50.0,1,0,,degrade10,steady,1,halo,0.100,85.0,before
4,1,random,n06 n07 n08 n09,4.0,3.9,4.5,0.5,50.0,1,0,,degrade10,steady,1,halo,0.100,95.0,before
4,2,netload,n02 n04 n03 n01,8.0,7.9,8.5,0.3,10.0,1,0,,degrade10,steady,1,halo,0.100,100.0,before
4,3,oracle,n01 n03 n04 n05,1.2,1.1,1.5,0,80.0,1,0,,degrade10,steady,1,halo,0.000,110.0,before
5,1,oracle,n01 n03 n04 n05,1.2,1.1,1.5,0,80.0,1,0,,degrade10,steady,1,halo,0.000,120.0,
5,2,netload,n02 n04 n03 n01,3.0,2.9,3.5,0.3,10.0,1,0,,degrade10,steady,1,halo,0.100,125.0,
5,3,random,n06 n07 n08 n09,5.0,4.9,5.5,0.5,50.0,1,0,,degrade10,steady,1,halo,0.100,130.0,after
6,1,netload,n04 n03 n01 n05,1.2,1.1,1.5,0.3,80.0,1,0,,degrade10,steady,1,halo,0.100,140.0,after
6,2,random,n06 n07 n08 n09,6.0,5.9,6.5,0.5,50.0,1,0,,degrade10,steady,1,halo,0.100,150.0,after
6,3,oracle,n01 n03 n04 n05,1.2,1.1,1.5,0,80.0,1,0,,degrade10,steady,1,halo,0.000,160.0,after
7,1,netload,n04 n03 n01 n05,1.2,1.1,1.5,0.3,80.0,1,0,,degrade10,steady,1,halo,0.100,170.0,after
7,2,random,n06 n07 n08 n09,4.0,3.9,4.5,0.5,50.0,1,0,,degrade10,steady,1,halo,0.100,180.0,after
`

// The report of a CSV with the retest column prints the phase after the
// change whole and split at the first re-test, in the summary (netload
// against the oracle and random per side) and in the tables; the same
// runs without the column (a CSV from before it) only whole, with the
// same figures.
func TestReportSplitsAtFirstRetest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	newCSV, oldCSV := filepath.Join(dir, "new.csv"), filepath.Join(dir, "old.csv")
	var old strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(phase1CSV, "\n"), "\n") {
		f := strings.Split(line, ",")
		old.WriteString(strings.Join(f[:17], ",") + "\n")
	}
	if err := os.WriteFile(newCSV, []byte(phase1CSV), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oldCSV, []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := config{cases: []string{"degrade10"}, testbed: "../../testbed", np: 4, policies: []string{"random", "netload", "oracle"}}
	report := func(path string) string {
		t.Helper()
		var b strings.Builder
		if err := reprint(c, path, &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	whole := "| degrade10 | halo | steady, after change 1 | 4.280 | 1.200 | 3.57 | 4.800 |"
	got := report(newCSV)
	for _, want := range []string{
		whole,
		// netload 8, 8 against the oracle's 1.2, 1.2 and random's 5, 4:
		// gains -60 % and -100 %; groups n02's, not as good.
		"| degrade10 | halo | steady, after change 1, before re-test | 8.000 | 1.200 | 6.67 | 4.500 | -80.0 % | -77.8 % | 73.3 % |",
		"| 0 of 2 |",
		// netload 1.2, 1.2 against random's 6, 4 (rep 5's random pairs
		// with no netload run on its side): 80 % and 70 %.
		"| degrade10 | halo | steady, after change 1, after re-test | 1.200 | 1.200 | 1.00 | 5.000 | 75.0 % | 76.0 % | 76.0 % |",
		"| 2 of 2 |",
		"### degrade10: halo, steady state, after scheduled change 1\n",
		"### degrade10: halo, steady state, after scheduled change 1, placed before the first re-test\n",
		"### degrade10: halo, steady state, after scheduled change 1, placed after the first re-test\n",
		"| netload | 2 | 8.000 | 8.000 | 0.00 | 6.67 | 6.67 |",
		"| netload | 2 | 1.200 | 1.200 | 0.00 | 1.00 | 1.00 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report of %s lacks %q:\n%s", newCSV, want, got)
		}
	}
	// Each split comes after the phase's whole, before comes before after.
	wi := strings.Index(got, "after scheduled change 1\n")
	bi := strings.Index(got, "placed before the first re-test")
	ai := strings.Index(got, "placed after the first re-test")
	if !(wi >= 0 && wi < bi && bi < ai) {
		t.Errorf("sections out of order: whole at %d, before at %d, after at %d", wi, bi, ai)
	}
	// Every row of every table has as many cells as its header.
	var cells int
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "|") {
			cells = 0
			continue
		}
		n := strings.Count(line, "|")
		if cells == 0 {
			cells = n
		} else if n != cells {
			t.Errorf("row of %d cells under a header of %d: %s", n-1, cells-1, line)
		}
	}

	got = report(oldCSV)
	if !strings.Contains(got, whole) {
		t.Errorf("report of a CSV without retest lacks %q:\n%s", whole, got)
	}
	if strings.Contains(got, "re-test") {
		t.Errorf("report of a CSV without retest splits at a re-test:\n%s", got)
	}
	recs, err := readCSV(oldCSV)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Retest != "" || r.PlacedS != 0 {
			t.Fatalf("run of a CSV without the columns: retest %q, placed_s %v", r.Retest, r.PlacedS)
		}
	}
	if before, after := sidesOf(recs); before != 0 || after != 0 {
		t.Errorf("old CSV split into %d before, %d after", before, after)
	}
	recs, err = readCSV(newCSV)
	if err != nil {
		t.Fatal(err)
	}
	if before, after := sidesOf(recs); before != 6 || after != 6 {
		t.Errorf("new CSV split into %d before, %d after, want 6 and 6", before, after)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte(strings.Replace(phase1CSV, ",before\n", ",sooner\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCSV(bad); err == nil || !strings.Contains(err.Error(), "sooner") {
		t.Errorf("a retest value of neither side: %v", err)
	}
}

// The progress log's run lines, with the side after a change and the TCP
// counters, rebuild into runs.
func TestRunLine(t *testing.T) {
	t.Parallel()
	for line, want := range map[string][]string{
		"[ 524.5s load 4.84] degrade10 steady 3/6 phase 1 (after re-test) oracle         lammps on n01,n03,n04,n05 -> 1.318s (comm 1.224s) tcp 0 RTOs 1 retrans 1 TLPs, 0 tbf drops": {"1", "after", "oracle", "lammps", "1.318"},
		"[ 524.5s load 4.84] degrade10 steady 3/6 phase 0 netload        halo   on n01,n03,n04,n05 -> 1.318s (comm 1.224s) tcp 0 RTOs 1 retrans 1 TLPs, 0 tbf drops":                 {"0", "", "netload", "halo", "1.318"},
		"[ 524.5s load 4.84] degrade10 steady 3/6 phase 1 (unknown re-test) random  halo   on n01,n03 -> FAILED: exit 1":                                                             {"1", "unknown", "random", "halo", ""},
	} {
		m := runLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("no match: %s", line)
			continue
		}
		if got := []string{m[4], m[5], m[6], m[7], m[9]}; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", line, got, want)
		}
	}
}

// sidesOf counts the runs the report's sections put before and after the
// first re-test.
func sidesOf(recs []runRec) (before, after int) {
	for _, sec := range sections(recs, "degrade10") {
		switch sec.key.retest {
		case retestBefore:
			before += len(sec.recs)
		case retestAfter:
			after += len(sec.recs)
		}
	}
	return before, after
}
