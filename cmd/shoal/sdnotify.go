package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notifySystemd tells systemd (Type=notify) how the agent stands: STATUS
// while it joins, READY=1 once ready() holds, then WATCHDOG=1 at a third
// of WatchdogSec for as long as alive() returns, so a wedged agent is
// restarted. Without NOTIFY_SOCKET (not started by systemd) it returns at
// once. It returns when ctx ends.
func notifySystemd(ctx context.Context, ready func() (bool, string), alive func(), log *slog.Logger) {
	if ok, err := daemon.SdNotify(false, "STATUS=starting"); !ok {
		if err != nil {
			log.Warn("systemd notification failed", "err", err.Error())
		}
		return
	}
	var dog <-chan time.Time
	if every, err := daemon.SdWatchdogEnabled(false); err == nil && every > 0 {
		t := time.NewTicker(every / 3)
		defer t.Stop()
		dog = t.C
	}
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	said := ""
	for {
		if poll != nil {
			switch ok, why := ready(); {
			case ok:
				notify(log, daemon.SdNotifyReady+"\nSTATUS="+why)
				log.Info("ready: told systemd", "status", why)
				poll.Stop()
				poll = nil
			case why != said:
				notify(log, "STATUS="+why)
				said = why
			}
		}
		var tick <-chan time.Time
		if poll != nil {
			tick = poll.C
		}
		select {
		case <-ctx.Done():
			notify(log, daemon.SdNotifyStopping)
			return
		case <-tick:
		case <-dog:
			alive()
			notify(log, daemon.SdNotifyWatchdog)
		}
	}
}

func notify(log *slog.Logger, state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		log.Warn("systemd notification failed", "state", state, "err", err.Error())
	}
}
