package probes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/probes/child"
	"github.com/shoal-hpc/shoal/internal/spawn"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/probeplan"
)

// probeProc is one running (or ended) probe: an OS process started from
// Config.Bin, or, without a binary, child.Run in a goroutine. Both speak
// the same protocol over pipes.
type probeProc struct {
	kind    string
	gen     uint64 // the raft generation it was started for
	pid     int    // 0 in-process
	started time.Time
	sendq   chan child.Msg
	// tuning is the settings last sent in a config line; the manager
	// sends a new line when they differ from its own (a SIGHUP).
	tuning Tuning
	stdin  io.WriteCloser
	kill   func()
	done   chan struct{} // closed when it has ended

	mu       sync.Mutex
	lastBeat time.Time
	exitErr  error
}

func (p *probeProc) beat(at time.Time) {
	p.mu.Lock()
	p.lastBeat = at
	p.mu.Unlock()
}

// status is the state the node gossips and the last heartbeat.
func (p *probeProc) status() (string, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return probeplan.StateExited, p.lastBeat
	default:
	}
	if p.lastBeat.IsZero() {
		return probeplan.StateStarting, p.lastBeat
	}
	return probeplan.StateRunning, p.lastBeat
}

func (p *probeProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// launchProbe starts a probe of kind: exec'd from bin, or in-process when
// bin is empty or sampler is set for the nodestate probe (an in-process
// probe ends with ctx). onMsg gets every message the probe writes, from
// the probe's reader goroutine.
func (m *Manager) launchProbe(ctx context.Context, kind string, gen uint64, onMsg func(*probeProc, child.Msg)) (*probeProc, error) {
	p := &probeProc{kind: kind, gen: gen, started: m.now(), done: make(chan struct{})}
	var stdout io.ReadCloser
	inproc := m.d.Bin == "" || m.cfg.InProcess || (kind == "nodestate" && m.d.Sampler != nil)
	if inproc {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(ctx)
		p.stdin, stdout = inW, outR
		p.kill = func() { cancel(); inW.Close(); outW.Close() }
		var sampler probe.Sampler
		if kind == "nodestate" {
			sampler = m.d.Sampler
		}
		go func() {
			err := child.Run(ctx, kind, inR, outW, sampler, m.log.With("probe", kind))
			outW.CloseWithError(io.EOF)
			inR.Close()
			p.mu.Lock()
			p.exitErr = err
			p.mu.Unlock()
		}()
	} else {
		cmd := exec.Command(m.d.Bin, "probe", kind)
		// Die with the agent; own process group so a signal to the
		// agent's terminal group does not reach probes first.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", kind, err)
		}
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, fmt.Errorf("probe %s: %w", kind, err)
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", kind, err)
		}
		if err := spawn.Start(cmd); err != nil {
			return nil, fmt.Errorf("start probe %s from %s: %w", kind, m.d.Bin, err)
		}
		p.pid, p.stdin = cmd.Process.Pid, in
		p.kill = func() { _ = cmd.Process.Kill() }
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				m.log.Info("probe says", "probe", kind, "pid", p.pid, "line", sc.Text())
			}
		}()
		go func() {
			<-p.done
			err := cmd.Wait()
			m.log.Info("probe process ended", "probe", kind, "pid", p.pid, "status", err)
		}()
	}
	p.sendq = make(chan child.Msg, 16)
	go func() {
		// Writes go through a queue so that a hung probe (a full pipe)
		// never blocks the agent.
		w := child.NewWriter(p.stdin)
		for {
			select {
			case msg := <-p.sendq:
				if err := w.Send(msg); err != nil {
					return
				}
			case <-p.done:
				p.stdin.Close()
				return
			}
		}
	}()
	go func() {
		err := child.ReadLines(stdout, func(msg child.Msg) { onMsg(p, msg) })
		if err != nil {
			m.log.Warn("probe output", "probe", kind, "err", err)
			p.kill()
		}
		p.mu.Lock()
		if p.exitErr == nil {
			p.exitErr = err
		}
		p.mu.Unlock()
		close(p.done)
		m.wakeUp()
	}()
	return p, nil
}

// send queues a message for the probe; it reports false when the queue
// is full (the probe does not read: hung) or the probe has ended.
func (p *probeProc) send(m child.Msg) bool {
	if p.exited() {
		return false
	}
	select {
	case p.sendq <- m:
		return true
	default:
		return false
	}
}
