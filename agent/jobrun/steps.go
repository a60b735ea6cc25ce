package jobrun

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Job steps: every MPI launch inside a batch script is a step,
// numbered from 0 as Slurm's JOBID.0, JOBID.1, listed by `shoal job`.
//
// The script's PATH starts with a directory of launcher shims (mpiexec,
// mpirun and their flavoured names), each `shoal step NAME "$@"`; that runs
// the real launcher found further along PATH and tells the head's agent,
// on a Unix socket only the job's owner may reach, when the step starts
// (its command) and how it ended (its exit status). The agent records both
// in raft (record_step). A launch by absolute path bypasses the shims and
// is not a step, as a program started without srun is not one in Slurm.

// StepLaunchers are the launcher names the shims stand in for.
var StepLaunchers = []string{"mpiexec", "mpirun", "mpiexec.mpich", "mpiexec.hydra", "mpirun.mpich",
	"mpiexec.openmpi", "mpirun.openmpi", "orterun", "srun"}

// StepMessage is one line `shoal step` writes on the step socket: the
// step's start (Cmd) or its end (End, with Exit).
type StepMessage struct {
	Cmd  []string `json:"cmd,omitempty"`
	End  bool     `json:"end,omitempty"`
	Exit *int     `json:"exit,omitempty"`
}

// Step messages' bounds: a command keeps its first raftfsm.MaxStepArgs
// arguments, each its first maxStepArgLen bytes.
const (
	maxStepArgLen = 256
	maxStepLine   = 64 << 10
)

// stepServer records the steps of one batch attempt.
type stepServer struct {
	n     *Node
	k     Key
	nodes string
	ln    net.Listener

	mu    sync.Mutex
	next  int
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// serveSteps writes the launcher shims into dir (root's, from
// writeLauncherWrapper), listens on dir/steps for `shoal step`, and
// returns the server and the variables that make the script's launches
// go through the shims (given the script's environment so far).
func (n *Node) serveSteps(ctx context.Context, dir string, k Key, att *raftfsm.Attempt, cred *jobexec.Cred, env []string) (*stepServer, []string, error) {
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return nil, nil, fmt.Errorf("step shims: %w", err)
	}
	for _, name := range StepLaunchers {
		shim := fmt.Sprintf("#!/bin/sh\nexec '%s' step --skip '%s' -- '%s' \"$@\"\n", n.bin(), bin, name)
		// root's, 0755: the owner runs the shims but cannot change them.
		if err := os.WriteFile(filepath.Join(bin, name), []byte(shim), 0o755); err != nil {
			return nil, nil, fmt.Errorf("step shims: %w", err)
		}
	}
	sock := filepath.Join(dir, "steps")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, nil, fmt.Errorf("step socket: %w", err)
	}
	// Only the job's owner (and root) may connect: 0600, the owner's.
	if err = os.Chmod(sock, 0o600); err == nil && cred != nil {
		err = os.Chown(sock, int(cred.UID), int(cred.GID))
	}
	if err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("step socket: %w", err)
	}
	hosts := make([]string, len(att.Hosts))
	for i, h := range att.Hosts {
		hosts[i] = h.Node
	}
	s := &stepServer{n: n, k: k, nodes: jobfmt.CompressHosts(hosts), ln: ln, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept(ctx)
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the job helper sets the variables in order: the last one wins
		}
	}
	return s, []string{"SHOAL_STEP_SOCK=" + sock, "PATH=" + bin + ":" + path}, nil
}

func (s *stepServer) accept(ctx context.Context) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(ctx, c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// serve reads one step's start and end from c. A connection that closes
// without an end (the shim was killed) ends the step with no exit status.
func (s *stepServer) serve(ctx context.Context, c net.Conn) {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), maxStepLine)
	n := -1
	for sc.Scan() {
		var m StepMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			s.n.log.Warn("bad step message", "job", s.k.Job, "err", err)
			return
		}
		switch {
		case !m.End && n < 0 && len(m.Cmd) > 0:
			s.mu.Lock()
			n = s.next
			s.next++
			s.mu.Unlock()
			s.propose(ctx, raftfsm.RecordStep{ID: s.k.Job, Attempt: s.k.Attempt, Step: n, Cmd: clipStepCmd(m.Cmd), Nodes: s.nodes})
		case m.End && n >= 0:
			s.propose(ctx, raftfsm.RecordStep{ID: s.k.Job, Attempt: s.k.Attempt, Step: n, End: true, ExitCode: m.Exit})
			return
		}
	}
	if n >= 0 {
		s.propose(ctx, raftfsm.RecordStep{ID: s.k.Job, Attempt: s.k.Attempt, Step: n, End: true})
	}
}

// clipStepCmd bounds a step's command for raft.
func clipStepCmd(cmd []string) []string {
	out := make([]string, 0, min(len(cmd), raftfsm.MaxStepArgs))
	for _, a := range cmd[:min(len(cmd), raftfsm.MaxStepArgs)] {
		if len(a) > maxStepArgLen {
			a = a[:maxStepArgLen]
		}
		out = append(out, a)
	}
	return out
}

// propose commits a step record, retrying for a while: a step is worth a
// few retries, not holding up the attempt's end.
func (s *stepServer) propose(ctx context.Context, r raftfsm.RecordStep) {
	b, err := raftfsm.Encode(raftfsm.CmdRecordStep, s.n.now(), r)
	if err != nil {
		s.n.log.Error("encode record_step", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		res, err := s.n.d.Propose(ctx, b)
		if err == nil {
			if res.Err != "" {
				s.n.log.Info("step not recorded", "job", r.ID, "attempt", r.Attempt, "step", r.Step, "err", res.Err)
			}
			return
		}
		s.n.log.Warn("record step, retrying", "job", r.ID, "attempt", r.Attempt, "step", r.Step, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// close stops accepting steps and waits for the open ones to say how they
// ended, for at most grace: a launcher the script left running in the
// background is cut off (its step ends with no exit status).
func (s *stepServer) close(grace time.Duration) {
	s.ln.Close()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	<-done
}

// IsMPICHLauncher reports whether a step's launcher is MPICH's Hydra: by
// its name, or, for the generic mpiexec and mpirun, by the file the name
// resolves to (Debian's alternatives link to mpiexec.mpich or
// mpirun.openmpi).
func IsMPICHLauncher(name, resolved string) bool {
	for _, n := range []string{filepath.Base(name), filepath.Base(resolved)} {
		if strings.Contains(n, "mpich") || strings.Contains(n, "hydra") {
			return true
		}
	}
	return false
}

// MPICHStepArgs are the arguments shoal step puts before an MPICH step's
// own: Hydra forwards mpiexec's whole environment by default, the head's
// SHOAL_NODE and process marker with it, so every rank would name the head
// as its node and carry the head's marker (and the head's capability file,
// agent address and GPUs). A -genvlist of every variable but perNodeVars
// lets each remote rank keep its own node's, as BuildLaunch does for MPICH
// jobs. It goes with a step's own -genv and -env, which set a value on
// every node (a step's -genv CUDA_VISIBLE_DEVICES holds everywhere), and
// with -envall, -envnone and -envlist, which choose for their executable
// over it; a step that chooses which variables travel to all of them
// (hydraPropagation) is left as it is: Hydra refuses a second choice
// ("duplicate setting").
func MPICHStepArgs(env, args []string) []string {
	for _, a := range args {
		if slices.Contains(hydraPropagation, "-"+strings.TrimLeft(a, "-")) {
			return nil
		}
	}
	var names []string
	seen := map[string]bool{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name != "" && !slices.Contains(perNodeVars, name) && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return []string{"-genvlist", strings.Join(names, ",")}
}

// hydraPropagation are mpiexec's options (with one dash; Hydra takes two as
// well) that choose which of its environment variables reach the ranks of
// every executable.
var hydraPropagation = []string{"-genvall", "-genvnone", "-genvlist"}
