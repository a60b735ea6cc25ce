package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

func TestSafe(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain /usr/bin/ring 10": "plain /usr/bin/ring 10",
		"a\x1b]0;pwned\x07b":     `a\x1b]0;pwned\ab`,
		"\x1b[2J":                `\x1b[2J`,
		"tab\tnl\ncr\r":          `tab\tnl\ncr\r`,
		"del\x7f c1\u009b":       `del\x7f c1\u009b`,
		"bidi\u202eevil":         `bidi\u202eevil`,
		"bad\xffutf8":            `bad\xffutf8`,
		"naïve 名前 back\\slash":   "naïve 名前 back\\slash",
	}
	for in, want := range cases {
		if got := safe(in); got != want {
			t.Errorf("safe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCellCutsOnRunes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("名前", 30)
	for n := 1; n < 62; n++ {
		got := cell(long, n)
		if !utf8.ValidString(got) {
			t.Fatalf("cell(..., %d) = %q is not valid UTF-8", n, got)
		}
		if c := utf8.RuneCountInString(got); c > n {
			t.Fatalf("cell(..., %d) has %d runes", n, c)
		}
	}
	if got := cell("short", 40); got != "short" {
		t.Fatalf("cell cut a short string: %q", got)
	}
}

// TestListingsEscapeControls: a job whose command line, working directory
// and reason carry terminal escapes (set the window title, clear the
// screen) prints them escaped in `shoal jobs` and `shoal job`, so whoever
// lists the jobs (root included) keeps their terminal; --json stays exact.
func TestListingsEscapeControls(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	evil := []string{"/bin/echo", "\x1b]0;pwned\x07", "\x1b[2J", strings.Repeat("名", 50)}
	code := 1
	job := api.Job{ID: 7, State: "failed", Owner: "mallory", Attempt: 1, Reason: "boom\x1b[2J", ExitCode: &code,
		SubmittedAt: time.Now(), Spec: api.JobSpec{Cmd: evil, NP: 1, Workdir: "/tmp/\x1b[31mred", MPI: "none"},
		Hosts: []api.JobHost{}, Attempts: []api.Attempt{{N: 1, State: "failed", Reason: "rank died\x1b]0;x\x07"}}}
	token := testcluster.NewToken(t)
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v any = []api.Job{job}
		if r.URL.Path == "/v1/jobs/7" {
			v = job
		}
		_ = json.NewEncoder(w).Encode(v)
	}))
	for _, args := range [][]string{{"jobs"}, {"job", "7"}} {
		cmd := func(extra ...string) []string {
			return append(append([]string{"shoal", args[0], "--addr", srv.URL, "--token", token}, extra...), args[1:]...)
		}
		var o, e strings.Builder
		if rc := run(cmd(), &o, &e); rc != 0 {
			t.Fatalf("%v: exit %d: %s", args, rc, e.String())
		}
		out := o.String()
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%v printed raw control characters:\n%q", args, out)
		}
		for _, want := range []string{`\x1b]0;pwned\a`, `\x1b[2J`} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: want %s in\n%s", args, want, out)
			}
		}
		if !utf8.ValidString(out) {
			t.Errorf("%v: output is not valid UTF-8 after cutting: %q", args, out)
		}
		o.Reset()
		if rc := run(cmd("--json"), &o, &e); rc != 0 {
			t.Fatalf("%v --json: exit %d", args, rc)
		}
		var got []api.Job
		raw := o.String()
		if args[0] == "job" {
			raw = "[" + raw + "]"
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got) != 1 {
			t.Fatalf("%v --json: %v\n%s", args, err, raw)
		}
		if strings.Join(got[0].Spec.Cmd, "|") != strings.Join(evil, "|") || got[0].Spec.Workdir != job.Spec.Workdir {
			t.Errorf("%v --json changed the strings: %q", args, got[0].Spec.Cmd)
		}
	}
}
