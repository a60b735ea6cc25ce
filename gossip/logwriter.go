package gossip

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// logWriter turns memberlist's "[LEVEL] memberlist: text" lines into slog
// records, so an agent's logs stay structured end to end. Lines about
// messages that failed to decrypt go to rejects instead: they are what
// anyone who can reach the gossip port sends, not the agent's errors.
type logWriter struct {
	l   *slog.Logger
	rej *rejects
}

func (w logWriter) Write(p []byte) (int, error) {
	line := bytes.TrimSpace(p)
	lvl := slog.LevelInfo
	for prefix, l := range map[string]slog.Level{"[DEBUG]": slog.LevelDebug, "[WARN]": slog.LevelWarn, "[ERR]": slog.LevelError, "[ERROR]": slog.LevelError, "[INFO]": slog.LevelInfo} {
		if bytes.HasPrefix(line, []byte(prefix)) {
			lvl, line = l, bytes.TrimSpace(line[len(prefix):])
			break
		}
	}
	line = bytes.TrimPrefix(line, []byte("memberlist: "))
	if w.rej != nil && lvl >= slog.LevelWarn && bytes.Contains(bytes.ToLower(line), []byte("decrypt")) {
		w.rej.add(string(line), bytes.Contains(line, []byte("packet")))
		return len(p), nil
	}
	w.l.Log(context.Background(), lvl, string(line), "component", "memberlist")
	return len(p), nil
}

// rejectLogEvery is how often at most a line says that undecryptable
// gossip keeps arriving.
const rejectLogEvery = time.Minute

// rejects counts gossip messages that failed to decrypt (a node with
// another cluster token, a port scanner, a stranger's garbage) and logs
// them at most once per interval. memberlist logged one ERROR line per
// packet, so whoever could send UDP to the port could fill the disk and
// bury every other line.
type rejects struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	packets, streams atomic.Uint64

	mu        sync.Mutex
	lastLine  time.Time
	sinceLine int
}

func newRejects(log *slog.Logger) *rejects {
	return &rejects{log: log, every: rejectLogEvery, now: time.Now}
}

// add counts one rejected message; msg is memberlist's line about it.
func (r *rejects) add(msg string, packet bool) {
	if packet {
		r.packets.Add(1)
	} else {
		r.streams.Add(1)
	}
	r.mu.Lock()
	r.sinceLine++
	now := r.now()
	if !r.lastLine.IsZero() && now.Sub(r.lastLine) < r.every {
		r.mu.Unlock()
		return
	}
	n := r.sinceLine
	r.lastLine, r.sinceLine = now, 0
	r.mu.Unlock()
	r.log.Warn("gossip messages that failed to decrypt (a node with another cluster token, or a stranger); at most one line a minute, all counted in shoal_gossip_undecryptable_total",
		"component", "memberlist", "count", n, "last", msg)
}

// Undecryptable is how many gossip messages this node dropped because they
// failed to decrypt, UDP packets and TCP streams, since it started.
func (g *Gossip) Undecryptable() (packets, streams uint64) {
	return g.rejects.packets.Load(), g.rejects.streams.Load()
}
