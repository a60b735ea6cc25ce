package launchtrace_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/internal/launchtrace"
)

func TestMarkParsesBackByJobFirstAndLast(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	launchtrace.Mark(context.Background(), log, launchtrace.AckCommitted, 7, 1, t0.Add(time.Millisecond))
	log.Info("something else", "stage", "not a stage line")
	launchtrace.Mark(context.Background(), log, launchtrace.AckCommitted, 7, 1, t0)
	launchtrace.Mark(context.Background(), log, launchtrace.Placed, 8, 2, t0)
	buf.WriteString("time=x level=INFO msg=text\n{\"msg\":\"launch st") // a text line and a cut one
	ev, err := launchtrace.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 3 {
		t.Fatalf("parsed %d stage lines, want 3: %+v", len(ev), ev)
	}
	if ev[2] != (launchtrace.Event{Stage: launchtrace.Placed, Job: 8, Attempt: 2, At: t0}) {
		t.Errorf("third line parsed as %+v", ev[2])
	}
	in := launchtrace.ByJob(ev)[7]
	if got := in.Last[launchtrace.AckCommitted]; !got.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("last ack of job 7 at %v, want %v (the later of the two nodes)", got, t0.Add(time.Millisecond))
	}
	if got := in.First[launchtrace.AckCommitted]; !got.Equal(t0) {
		t.Errorf("first ack of job 7 at %v, want %v (the earlier of the two nodes)", got, t0)
	}
}

func TestMarkLogsNothingAboveDebug(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	launchtrace.Mark(context.Background(), log, launchtrace.Placed, 1, 1, time.Now())
	launchtrace.Mark(context.Background(), nil, launchtrace.Placed, 1, 1, time.Now())
	if strings.Contains(buf.String(), launchtrace.Msg) {
		t.Errorf("a stage line at info level: %s", buf.String())
	}
}

func TestParseRefusesABadInstant(t *testing.T) {
	t.Parallel()
	_, err := launchtrace.Parse(strings.NewReader(`{"msg":"launch stage","stage":"placed","job":1,"attempt":1,"at":"yesterday"}` + "\n"))
	if err == nil {
		t.Fatal("a stage line with a bad instant parsed")
	}
}
