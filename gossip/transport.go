package gossip

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/hashicorp/memberlist"
)

// listenTransport binds memberlist's TCP and UDP listeners, which shoal
// then wraps in a streamGuard. With port 0 it takes one port free for both
// protocols, retrying when another process wins the race for the UDP side,
// and writes the port back into mc (memberlist only does that for a
// transport it creates itself).
func listenTransport(mc *memberlist.Config) (*memberlist.NetTransport, error) {
	nc := &memberlist.NetTransportConfig{BindAddrs: []string{mc.BindAddr}, BindPort: mc.BindPort, Logger: mc.Logger}
	tries := 1
	if mc.BindPort == 0 {
		tries = 10
	}
	var err error
	for range tries {
		var nt *memberlist.NetTransport
		nt, err = memberlist.NewNetTransport(nc)
		if err == nil {
			if mc.BindPort == 0 {
				mc.BindPort = nt.GetAutoBindPort()
				mc.AdvertisePort = mc.BindPort
			}
			return nt, nil
		}
		// memberlist formats the bind error with %v: only its text is left.
		if !strings.Contains(err.Error(), syscall.EADDRINUSE.Error()) {
			break
		}
	}
	return nil, fmt.Errorf("bind gossip listeners: %w", err)
}

// streamCap is the largest first message an inbound stream may declare
// now (see streamMessageCap).
func (g *Gossip) streamCap() int {
	g.mu.Lock()
	ml := g.ml
	g.mu.Unlock()
	members := 1
	if ml != nil {
		members = ml.NumMembers()
	}
	return streamMessageCap(int(g.stateBytes.Load()), members)
}
