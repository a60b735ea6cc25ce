package gossip

import "github.com/hashicorp/memberlist"

// stateBroadcast is one node state queued for gossip. A newer state of the
// same node replaces it in the queue, so a busy node never floods its peers
// with versions nobody needs any more.
type stateBroadcast struct {
	name string
	msg  []byte
}

var _ memberlist.NamedBroadcast = (*stateBroadcast)(nil)

func (b *stateBroadcast) Invalidates(o memberlist.Broadcast) bool {
	ob, ok := o.(*stateBroadcast)
	return ok && ob.name == b.name
}
func (b *stateBroadcast) Name() string    { return "state/" + b.name }
func (b *stateBroadcast) Message() []byte { return b.msg }
func (b *stateBroadcast) Finished()       {}
