package launchtrace

import (
	"context"
	"log/slog"
	"time"
)

// Msg is the message of every stage line.
const Msg = "launch stage"

// Mark logs that job's attempt reached stage at instant at (attempt 0
// before the job is placed). It costs one level check when debug lines
// are off.
func Mark(ctx context.Context, log *slog.Logger, stage Stage, job uint64, attempt int, at time.Time) {
	if log == nil || !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	log.LogAttrs(ctx, slog.LevelDebug, Msg, slog.String("stage", string(stage)), slog.Uint64("job", job),
		slog.Int("attempt", attempt), slog.String("at", at.UTC().Format(time.RFC3339Nano)))
}
