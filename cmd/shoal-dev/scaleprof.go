package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	ossignal "os/signal"
	"path/filepath"
	"runtime"
	runtimepprof "runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Where a size's CPU, heap and waits go: bench-scale's -profile writes
// pprof files at each stage of a size, and -pprof serves the live
// profiles, which is how a size that stalls is looked into while it
// stalls.

// scaleProfiler writes one size's profiles into dir; the zero value (no
// dir) writes nothing.
type scaleProfiler struct {
	dir string
	n   int
	// mu orders the stages with a stop on a signal (onSignal).
	mu  sync.Mutex
	cpu *os.File
}

// startProfiler starts the CPU profile of the whole size and the block
// and mutex profiles (sampled: a blocking event of 10 µs or more is
// recorded, one mutex contention in 10).
func startProfiler(dir string, n int) (*scaleProfiler, error) {
	p := &scaleProfiler{dir: dir, n: n}
	if dir == "" {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile dir: %w", err)
	}
	runtime.SetBlockProfileRate(int((10 * time.Microsecond).Nanoseconds()))
	runtime.SetMutexProfileFraction(10)
	if err := p.startCPU(); err != nil {
		return nil, err
	}
	return p, nil
}

// The CPU profile is cut at every stage: n<N>-cpu-to-<stage>.pprof holds
// the CPU from the stage before (or the start) to that one, so the join
// and the steady state after it are read apart; the part being recorded
// is n<N>-cpu-running.pprof until its stage comes.
func (p *scaleProfiler) startCPU() error {
	f, err := os.Create(p.path("cpu-running.pprof"))
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	if err := runtimepprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile: %w", err)
	}
	p.cpu = f
	return nil
}

// cutCPU ends the CPU profile being recorded as the part up to stage.
func (p *scaleProfiler) cutCPU(stage string) {
	if p.cpu == nil {
		return
	}
	runtimepprof.StopCPUProfile()
	p.cpu.Close()
	p.cpu = nil
	if err := os.Rename(p.path("cpu-running.pprof"), p.path("cpu-to-"+stage+".pprof")); err != nil {
		progress("profile cpu: %v", err)
	}
}

// onSignal writes the profiles as they stand (stage "killed") when the
// size's process is told to stop: a size that stalls is stopped by hand,
// and its CPU profile is then the evidence of why.
func (p *scaleProfiler) onSignal() {
	if p == nil || p.dir == "" {
		return
	}
	ch := make(chan os.Signal, 1)
	ossignal.Notify(ch, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ch
		progress("stopped: writing profiles (stage killed)")
		p.stage("killed")
		p.stop()
		os.Exit(1)
	}()
}

func (p *scaleProfiler) path(name string) string {
	return filepath.Join(p.dir, fmt.Sprintf("n%d-%s", p.n, name))
}

// stage writes the heap (after a collection: what is live), the
// goroutines (one line per distinct stack, with counts) and the block and
// mutex profiles as they stand at a stage of the run.
func (p *scaleProfiler) stage(name string) {
	if p == nil || p.dir == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutCPU(name)
	defer func() {
		if err := p.startCPU(); err != nil {
			progress("%v", err)
		}
	}()
	runtime.GC()
	for _, k := range []struct{ prof, file string }{
		{"heap", name + "-heap.pprof"}, {"goroutine", name + "-goroutine.pprof"},
		{"block", name + "-block.pprof"}, {"mutex", name + "-mutex.pprof"},
	} {
		f, err := os.Create(p.path(k.file))
		if err != nil {
			progress("profile %s: %v", k.file, err)
			continue
		}
		if err := runtimepprof.Lookup(k.prof).WriteTo(f, 0); err != nil {
			progress("profile %s: %v", k.file, err)
		}
		f.Close()
	}
}

func (p *scaleProfiler) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutCPU("exit")
}

// servePprof serves net/http/pprof on addr until the process ends, and
// turns on block and mutex sampling so those profiles have content.
func servePprof(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-pprof %s: %w", addr, err)
	}
	runtime.SetBlockProfileRate(int((10 * time.Microsecond).Nanoseconds()))
	runtime.SetMutexProfileFraction(10)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	progress("pprof on http://%s/debug/pprof/", ln.Addr())
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}

// cpuMeter measures the cores this process used between two reads, from
// /proc/self/stat: the evidence of whether a size is CPU bound (2 of the
// machine's 2 cores) or waits on something else.
type cpuMeter struct {
	cpu  float64
	wall time.Time
}

func newCPUMeter() cpuMeter {
	c, _ := cpuSeconds(os.Getpid())
	return cpuMeter{cpu: c, wall: time.Now()}
}

// cores is the CPU seconds per wall second since m was taken.
func (m cpuMeter) cores() float64 {
	c, err := cpuSeconds(os.Getpid())
	secs := time.Since(m.wall).Seconds()
	if err != nil || secs <= 0 {
		return 0
	}
	return (c - m.cpu) / secs
}

// statusLoop prints, every period until stop closes, what the process is
// doing: the step's own words (what), the cores it used, its goroutines,
// heap and resident memory, and the machine's load.
func statusLoop(period time.Duration, what func() string, stop <-chan struct{}) {
	t := time.NewTicker(period)
	defer t.Stop()
	m := newCPUMeter()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rss, _ := rssKiB(os.Getpid())
		progress("%s; %.2f cores, %d goroutines, heap %s, rss %s", what(), m.cores(), runtime.NumGoroutine(),
			humanBytes(float64(ms.HeapAlloc)), humanBytes(float64(rss)*1024))
		m = newCPUMeter()
	}
}

// peakRSSKiB is this process's peak resident memory (VmHWM), in KiB.
func peakRSSKiB() (int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strconv.Atoi(strings.Fields(l)[1])
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// lagMeter measures how late a timer fires in this process: with more
// runnable goroutines than the cores run, every agent's timers (probes,
// gossip rounds) fire late by about as much. It keeps the largest
// lateness of a 5 ms sleep over the last 0.5 to 1 s (two buckets of
// lagBucket), and counts a sleep still running past its time as late by
// that much, so that a process too starved to take samples does not read
// as idle.
type lagMeter struct {
	mu        sync.Mutex
	start     time.Time     // of the current bucket
	cur, prev time.Duration // the largest lateness in the current and the previous bucket
	sleeping  time.Time     // when the running sample's sleep began (zero: none)

	quit chan struct{}
	once sync.Once
}

const (
	lagTick   = 5 * time.Millisecond
	lagBucket = 500 * time.Millisecond
)

func newLagMeter() *lagMeter {
	m := &lagMeter{quit: make(chan struct{}), start: time.Now()}
	go m.run()
	return m
}

func (m *lagMeter) run() {
	for {
		t := time.Now()
		m.mu.Lock()
		m.sleeping = t
		m.mu.Unlock()
		select {
		case <-m.quit:
			return
		case <-time.After(lagTick):
		}
		now := time.Now()
		m.observe(now, now.Sub(t)-lagTick)
	}
}

// observe records a sleep that ended at at, late by late.
func (m *lagMeter) observe(at time.Time, late time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sleeping = time.Time{}
	m.roll(at)
	m.cur = max(m.cur, late)
}

// roll moves the buckets on to now.
func (m *lagMeter) roll(now time.Time) {
	switch d := now.Sub(m.start); {
	case d >= 2*lagBucket:
		m.prev, m.cur, m.start = 0, 0, now
	case d >= lagBucket:
		m.prev, m.cur, m.start = m.cur, 0, m.start.Add(lagBucket)
	}
}

// recentAt is the largest lateness of the last 0.5 to 1 s at now, the
// running sleep's included.
func (m *lagMeter) recentAt(now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll(now)
	late := max(m.cur, m.prev)
	if !m.sleeping.IsZero() {
		late = max(late, now.Sub(m.sleeping)-lagTick)
	}
	return late
}

func (m *lagMeter) recent() time.Duration {
	if m == nil {
		return 0
	}
	return m.recentAt(time.Now())
}

// waitBelow waits until recent lateness is under d and returns how long
// it waited.
func (m *lagMeter) waitBelow(d time.Duration) time.Duration {
	t := time.Now()
	for m.recent() >= d {
		time.Sleep(lagTick) // polling the meter, not synchronisation
	}
	return time.Since(t)
}

func (m *lagMeter) stop() { m.once.Do(func() { close(m.quit) }) }
