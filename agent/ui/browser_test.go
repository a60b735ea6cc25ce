package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// idle is a node sampler that reports an idle node, so placement never
// waits for load to fall.
type idle struct{}

func (idle) Sample(context.Context) (probe.RawSample, error) {
	return probe.RawSample{At: time.Now(), MemAvail: 8 << 30}, nil
}

// chromium is Debian's browser, or the test skips (make deps installs it).
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (make deps installs Debian's)")
	return ""
}

// browserCtx starts a headless Chromium that accepts the agents'
// certificates (issued by the token's own CA, which the browser does not
// know), closed when the test ends.
func browserCtx(t testing.TB) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.IgnoreCertErrors, chromedp.WindowSize(1400, 1000), chromedp.Flag("lang", "en-GB"))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// The page's uncaught exceptions and console errors go to the test's
	// log: a broken script otherwise shows only as a page that never fills.
	exceptions, console := chromedp.Events(ctx, runtime.ExceptionThrown), chromedp.Events(ctx, runtime.ConsoleAPICalled)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			t.Logf("page exception: %s %s", ev.ExceptionDetails.Text, ev.ExceptionDetails.Exception.Description)
		}
	}()
	go func() {
		for ev, err := range console {
			if err != nil {
				return
			}
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				for _, a := range ev.Args {
					t.Logf("page console.%s: %s %s", ev.Type, a.Value, a.Description)
				}
			}
		}
	}()
	return ctx
}

// waitJS waits until expr is truthy in the page, failing the test with
// what after timeout (the browser polls on animation frames).
// A navigation under way (a login's redirect) ends a poll early: it is
// polled again on the new page until the deadline.
func waitJS(t testing.TB, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil || time.Now().After(deadline) || !navigated(err) {
			break
		}
	}
	if err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ''`))
		t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, body)
	}
}

// eval is the value of expr in the page, a promise's once it settles.
// navigated reports whether err is the page going away under a call.
func navigated(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated or closed") || strings.Contains(msg, "Cannot find context") ||
		strings.Contains(msg, "Execution context was destroyed")
}

func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot saves the page as NAME.png in $SHOAL_UI_SCREENSHOTS (make
// ui-screenshots sets it to docs/ui), else in the test's temporary dir.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("SHOAL_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func submit(t *testing.T, c *testcluster.Cluster, spec api.JobSpec) uint64 {
	t.Helper()
	spec.MPI, spec.Workdir, spec.MaxAttempts = "none", os.TempDir(), 1
	res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{
		RequestID: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), Owner: "root", Spec: spec})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return res.ID
}

// TestDashboard_InChromium drives the dashboard of a live three-agent
// cluster in a real headless Chromium: a browser without a session gets
// the login page and no data; after a login with the token it sees every
// node and the leader, measured bandwidth on the heatmap and a cell of it
// change with the next bandwidth cycle, a job go from
// queued to done without a reload, and the job's placement explanation.
// A page of another origin on the same host (the same site, so the
// SameSite cookie goes along) cannot kill a job with a forged POST; the
// dashboard's own kill button can.
func TestDashboard_InChromium(t *testing.T) {
	t.Parallel()
	ctx := browserCtx(t)
	c := testcluster.New(t, 3, testcluster.Options{
		Bin:     testcluster.BuildShoal(t),
		Sampler: func(int) probe.Sampler { return idle{} },
		Configure: func(i int, cfg *agent.Config) {
			cfg.CoallocTimeout = testcluster.Stretch(10 * time.Second)
			cfg.Probes.InProcess = true
			// A bandwidth cycle every few seconds, not every 5 minutes:
			// the test watches a heatmap cell change with a new measurement.
			cfg.Probes.BandwidthInterval, cfg.Probes.Budget = 5*time.Second, 0
		},
	})
	c.WaitLeader(45 * time.Second)
	base := c.Client(1).Base // a node that is likely not the leader: it forwards the explanation

	// No session: the login page, and no data from the API either.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/ui/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the login page", `document.getElementById('token') !== null`, 10*time.Second)
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/ui/login" {
		t.Fatalf("a browser without a session is at %s, want /ui/login", loc)
	}
	page := eval[string](t, ctx, `document.body.innerText`)
	for i := range c.N() {
		if strings.Contains(page, c.Name(i)+"\n") || strings.Contains(page, c.Name(i)+"\t") {
			t.Fatalf("login page shows node %s:\n%s", c.Name(i), page)
		}
	}
	code := eval[int](t, ctx, `fetch('/v1/nodes').then(r => r.status)`)
	if code != http.StatusUnauthorized {
		t.Fatalf("GET /v1/nodes from the browser without a session: %d, want 401", code)
	}
	screenshot(t, ctx, "login")

	// Log in as a person would.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("token"), c.Token()), chromedp.Submit(chromedp.ID("token"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "every node on the cluster page", `document.querySelectorAll('tr[data-node]').length === 3`, 30*time.Second)
	if eval[bool](t, ctx, `document.cookie.includes('shoal_session')`) {
		t.Fatal("the session cookie is readable from the page's scripts: want HttpOnly")
	}
	waitJS(t, ctx, "the leader marked", `document.getElementById('leader').textContent !== 'none' && document.querySelector('.leader') !== null`, 30*time.Second)
	screenshot(t, ctx, "cluster")
	// With the agent's event stream the page follows it; an agent without
	// one (404) is polled, and the header says which.
	streams := eval[int](t, ctx, `fetch('/v1/events?topic=job', {signal: AbortSignal.timeout(3000)}).then(r => r.status).catch(() => 200)`) == http.StatusOK
	t.Logf("agent has an event stream: %v; page says %q", streams, eval[string](t, ctx, `document.getElementById('live').textContent`))
	if streams {
		waitJS(t, ctx, "the page following the event stream", `document.getElementById('live').textContent === 'live'`, 10*time.Second)
	}

	// The network: a measured bandwidth cell appears once the in-process
	// probes test a pair.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav a[data-page="network"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "a measured bandwidth cell on the heatmap", `+(document.getElementById('main').dataset.bwCells || 0) > 0`, 90*time.Second)
	// The next bandwidth cycle measures again: a cell changes on the page
	// that shows it, without a reload.
	first := eval[string](t, ctx, `document.getElementById('main').dataset.bwSum`)
	waitJS(t, ctx, "a heatmap cell changed by a new bandwidth measurement",
		`document.getElementById('main').dataset.bwSum !== `+strconv.Quote(first), 90*time.Second)
	// Keyboard: Tab reaches the map, the arrow keys read its cells aloud
	// (the live region), as a pointer would.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.ID("bw")), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowDown)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the cell read from the keyboard", `/Bandwidth.*→/.test(document.getElementById('cell').textContent)`, 10*time.Second)
	screenshot(t, ctx, "network")

	// The probes: every node's, with their state and last beat.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav a[data-page="probes"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "a probe of every node", `new Set([...document.querySelectorAll('#probes tbody th')].map(e => e.textContent)).size === 3`, 30*time.Second)
	screenshot(t, ctx, "probes")

	// A job that may begin in a few seconds: queued first, then done, on
	// a page that never reloads (a reload would drop the marker).
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.__noReload = 1; location.hash = '#/jobs'`)); err != nil {
		t.Fatal(err)
	}
	id := submit(t, c, api.JobSpec{Cmd: []string{"/bin/sh", "-c", "echo hello from the dashboard test"}, NP: 2, PPN: 1,
		Begin: time.Now().Add(6 * time.Second)})
	row := fmt.Sprintf(`document.querySelector('tr[data-job="%d"]')`, id)
	waitJS(t, ctx, "the job queued", row+` && `+row+`.dataset.state === 'queued'`, 20*time.Second)
	screenshot(t, ctx, "jobs-queued")
	waitJS(t, ctx, "the job done", row+` && `+row+`.dataset.state === 'done'`, 90*time.Second)
	if eval[int](t, ctx, `window.__noReload || 0`) != 1 {
		t.Fatal("the page reloaded while the job ran")
	}

	// Any agent answers for the leader, which alone knows why.
	leader := c.Leader()
	other := (leader + 1) % c.N()
	var pl api.Placement
	if err := c.Client(other).Do(context.Background(), http.MethodGet, fmt.Sprintf("/v1/jobs/%d/placement", id), nil, &pl); err != nil ||
		pl.Leader != c.Name(leader) || pl.Attempt != 1 || len(pl.Score.Considered) == 0 || pl.Score.Why == "" {
		t.Fatalf("placement of job %d asked of %s: %+v %v, want the leader %s's explanation", id, c.Name(other), pl, err, c.Name(leader))
	}

	// Its placement explanation, through the link a person would follow.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href="#/jobs/%d"]`, id)))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the placement explanation", `document.querySelector('#candidates tr.chosen') !== null && document.getElementById('why').textContent.length > 0`, 30*time.Second)
	why := eval[string](t, ctx, `document.getElementById('why').textContent`)
	if !strings.Contains(why, "T = ") {
		t.Fatalf("placement explanation %q: want the winner's T", why)
	}
	waitJS(t, ctx, "the job's output", `document.getElementById('log').textContent.includes('hello from the dashboard test')`, 30*time.Second)
	screenshot(t, ctx, "job")

	// A forged cross-site POST: a page of another origin on this host
	// posts a form to kill a queued job with the browser's cookie.
	victim := submit(t, c, api.JobSpec{Cmd: []string{"/bin/true"}, NP: 1, Begin: time.Now().Add(time.Hour)})
	target := fmt.Sprintf("%s/v1/jobs/%d/kill", base, victim)
	evil := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form id="f" method="post" action="%s" enctype="text/plain">`+
			`<input name='{"user":"root","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`, target)
	}))
	defer evil.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(evil.URL)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the forged POST answered", `location.href.startsWith(`+strconv.Quote(base)+`) && document.body.innerText.length > 0`, 20*time.Second)
	if body := eval[string](t, ctx, `document.body.innerText`); !strings.Contains(body, "cross-site request refused") {
		t.Fatalf("forged POST answered %q: want it refused as cross-site", body)
	}
	if j, err := c.Client(0).Job(context.Background(), victim); err != nil || j.State != "queued" {
		t.Fatalf("job %d after the forged kill: %s %v, want still queued", victim, j.State, err)
	}

	// The dashboard's own kill, with its CSRF token, goes through.
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/ui/#/jobs/%d", base, victim))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the kill button", `document.getElementById('job-state') !== null && !document.getElementById('kill').hidden`, 20*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("kill")), chromedp.Click(chromedp.ID("kill"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the job killed from the dashboard", `document.getElementById('job-state').dataset.state === 'killed'`, 30*time.Second)
}
