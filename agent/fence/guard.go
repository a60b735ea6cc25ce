package fence

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoal-hpc/shoal/internal/procstat"
)

// Arg0 is the argv[0] under which the agent's executable is the guard;
// its one argument is the fence directory.
const Arg0 = "shoal-fence-guard"

// PollPeriod is how often the guard reads the lease: the part of a
// lapsed lease's overrun it adds (leader.FenceConfig.Slack covers it).
const PollPeriod = 100 * time.Millisecond

// lockFile keeps one guard per fence directory.
const lockFile = "guard.lock"

// idleExit is how long a guard stays once the lease has lapsed: what it
// froze stays frozen without it, and the agent's next start starts a
// guard again. A guard whose agent is gone for good (a crashed test's)
// does not poll for ever.
const idleExit = time.Hour

// init turns the process into the guard when the agent started it as one.
func init() {
	if len(os.Args) != 2 || os.Args[0] != Arg0 {
		return
	}
	os.Exit(guardMain(os.Args[1]))
}

func guardMain(dir string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("guard", dir)
	lock, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		log.Error("open the guard's lock", "err", err)
		return 1
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return 0 // a guard of an earlier life of the agent watches this directory
	}
	g := newGuard(log)
	for {
		l, ok, err := Read(dir)
		if err != nil {
			log.Warn("lease unreadable; keeping the last one", "err", err)
			l, ok = g.last, true
		}
		if !ok {
			log.Info("lease removed: the agent stopped its jobs; exiting")
			return 0
		}
		now := Now()
		g.step(l, now)
		if now-l.Until > int64(idleExit) {
			log.Info("lease lapsed an hour ago; what the guard stopped stays stopped; exiting")
			return 0
		}
		time.Sleep(PollPeriod) // a poll of a file another process writes: no event to wait on
	}
}

// guard is the guard's memory: the last lease, and what it stopped.
type guard struct {
	log    *slog.Logger
	last   Lease
	frozen *stopped // what the guard stopped, nil while the lease holds
	// seen are the groups of the last lease with their leaders' start
	// times: a lease written without them (by an earlier version) gets
	// the start time the guard read when it first saw the group.
	seen []Group
	// gone are the groups found no longer the job's: each is logged once
	// and never signalled again.
	gone map[Group]bool
	// stat reads /proc/PID/stat (procstat.Read; a test injects its own).
	stat func(pid int) (procstat.Stat, error)
	// noPidfd is set once the kernel refused a pidfd: the guard checks
	// leaders through /proc alone from then on.
	noPidfd bool
}

func newGuard(log *slog.Logger) *guard {
	return &guard{log: log, gone: map[Group]bool{}, stat: procstat.Read}
}

// stopped is what the guard stopped during one lapse.
type stopped struct {
	Freezers []Freezer
	Groups   []Group
}

// step enforces lease l at now: past its deadline it stops what l lists
// (once per lapse, and again for anything the agent added since); within
// it, it thaws what it stopped: what the agent let go on, and what it
// has killed by then. It signals a process group only while the group's
// leader is the process the lease recorded (signalGroup): once the leader
// has exited, the group is dropped at the next poll, so a lapse that the
// guard enforces for up to idleExit never reaches a later owner of the
// number.
func (g *guard) step(l Lease, now int64) {
	g.last = l
	g.seen = groups(l, g.seen, g.stat)
	if now < l.Until {
		if g.frozen != nil {
			g.log.Info("lease renewed: thawing what the guard stopped")
			g.thaw(*g.frozen)
			g.frozen = nil
		}
		return
	}
	if g.frozen == nil {
		g.log.Warn("lease lapsed: stopping the node's attempts", "lapsed_ms", (now-l.Until)/1e6,
			"cgroups", len(l.Freezers), "process_groups", len(l.Pgids))
		g.frozen = &stopped{}
	}
	for _, f := range l.Freezers {
		if err := os.WriteFile(f.File, []byte(f.Freeze), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
			g.log.Warn("freeze", "file", f.File, "err", err)
		}
	}
	for _, p := range g.seen {
		g.signal(p, unix.SIGSTOP)
	}
	g.frozen.Freezers, g.frozen.Groups = union(g.frozen.Freezers, l.Freezers), union(g.frozen.Groups, g.seen)
}

// signal sends sig to group p unless p is gone.
func (g *guard) signal(p Group, sig unix.Signal) {
	if g.gone[p] {
		return
	}
	err := signalGroup(p, sig, g.stat, !g.noPidfd)
	if errors.Is(err, errNoPidfd) {
		g.log.Warn("no pidfds: checking process group leaders through /proc alone", "pgid", p.Pgid)
		g.noPidfd = true
		err = signalGroup(p, sig, g.stat, false)
	}
	switch {
	case errors.Is(err, errGone):
		g.gone[p] = true
		g.log.Info("process group gone: its leader is not the process the lease recorded; not signalling it again", "pgid", p.Pgid, "start_ticks", p.Start)
	case err != nil:
		g.log.Warn("signal process group", "pgid", p.Pgid, "signal", sig, "err", err)
	}
}

func (g *guard) thaw(s stopped) {
	for _, f := range s.Freezers {
		_ = os.WriteFile(f.File, []byte(f.Thaw), 0) // killed and deleted by now, most likely
	}
	for _, p := range s.Groups {
		g.signal(p, unix.SIGCONT)
	}
}

func union[T comparable](a, b []T) []T {
	out := a
	for _, x := range b {
		found := false
		for _, y := range out {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// StartGuard starts the guard of dir from exe (a binary that links this
// package; /proc/self/exe when ""), its output appended to dir/guard.log.
// A guard already watching dir stays, and the new one exits at once.
func StartGuard(exe, dir string) error {
	if exe == "" {
		exe = "/proc/self/exe"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("fence dir: %w", err)
	}
	out, err := os.OpenFile(filepath.Join(dir, "guard.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("guard log: %w", err)
	}
	defer out.Close()
	p, err := os.StartProcess(exe, []string{Arg0, dir}, &os.ProcAttr{
		Dir:   "/",
		Files: []*os.File{nil, out, out},
		// A session of its own: no signal to the agent's process group
		// or terminal reaches it, and it outlives the agent.
		Sys: &unix.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fmt.Errorf("start the fence guard: %w", err)
	}
	go func() { _, _ = p.Wait() }() // reaped if it exits while the agent runs
	return nil
}

// EnsureGuard starts the guard of dir unless one runs: a guard exits an
// hour after a lease lapsed, or may have been killed, and a node that
// holds attempts again needs one.
func EnsureGuard(exe, dir string) error {
	if guardRunning(dir) {
		return nil
	}
	return StartGuard(exe, dir)
}

// guardRunning reports whether a guard holds dir's lock.
func guardRunning(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return true
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}
