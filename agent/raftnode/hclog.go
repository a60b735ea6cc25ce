package raftnode

import (
	"context"
	"io"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// slogSink receives every record of hclog's InterceptLogger and hands it
// to slog.
type slogSink struct{ l *slog.Logger }

func (s slogSink) Accept(name string, level hclog.Level, msg string, args ...interface{}) {
	var lvl slog.Level
	switch level {
	case hclog.Trace, hclog.Debug:
		lvl = slog.LevelDebug
	case hclog.Warn:
		lvl = slog.LevelWarn
	case hclog.Error:
		lvl = slog.LevelError
	default:
		lvl = slog.LevelInfo
	}
	s.l.Log(context.Background(), lvl, msg, append([]any{"component", name}, args...)...)
}

// raftLogger builds an intercepting hclog logger that writes nothing itself
// and hands every record to slog.
func raftLogger(l *slog.Logger) hclog.Logger {
	il := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "raft", Output: io.Discard, Level: hclog.Info})
	il.RegisterSink(slogSink{l})
	return il
}

// HCLog is an hclog logger named name that hands every record to l, for
// the hashicorp libraries beside raft (raft-autopilot).
func HCLog(l *slog.Logger, name string) hclog.Logger {
	return raftLogger(l).Named(name)
}
