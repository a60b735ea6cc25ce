package gossip

import (
	"bytes"
	"context"
	"log/slog"
)

// logWriter turns memberlist's "[LEVEL] memberlist: text" lines into slog
// records, so an agent's logs stay structured end to end.
type logWriter struct{ l *slog.Logger }

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
	w.l.Log(context.Background(), lvl, string(line), "component", "memberlist")
	return len(p), nil
}
