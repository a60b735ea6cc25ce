package twins

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// packetQueue is how many packets wait for a node's memberlist before
// more are dropped, as a full socket buffer drops datagrams.
const packetQueue = 1024

// Gossip returns a memberlist transport for name's next start, at the
// address name had before (a restarted node is where the cluster knows
// it). The transport it replaces, if any, must have been shut down.
func (n *Network) Gossip(name string) memberlist.NodeAwareTransport {
	n.mu.Lock()
	defer n.mu.Unlock()
	addr, ok := n.addrs[name]
	if !ok {
		n.nextPort++
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(n.nextPort))
		n.addrs[name], n.byAddr[addr] = addr, name
	}
	t := &gossipTransport{net: n, name: name, addr: &memAddr{addr},
		packets: make(chan *memberlist.Packet, packetQueue), streams: make(chan net.Conn), done: make(chan struct{})}
	n.gossip[name] = t
	return t
}

// memAddr is a gossip twin's address: an IP and port as memberlist wants
// them, on no socket.
type memAddr struct{ s string }

func (a *memAddr) Network() string { return "mem" }
func (a *memAddr) String() string  { return a.s }

// gossipTransport is one start of one node's memberlist transport.
type gossipTransport struct {
	net     *Network
	name    string
	addr    *memAddr
	packets chan *memberlist.Packet
	streams chan net.Conn
	// done is closed by Shutdown: the node is down, and what is sent to it
	// is lost.
	done chan struct{}
}

var _ memberlist.NodeAwareTransport = (*gossipTransport)(nil)

// peer is the transport a sends to, or nil when the link is cut or the
// node is not running.
func (t *gossipTransport) peer(a memberlist.Address) *gossipTransport {
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	name := a.Name
	if name == "" {
		name = t.net.byAddr[a.Addr]
	}
	p := t.net.gossip[name]
	if p == nil || !t.net.linked(t.name, name) {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
		return p
	}
}

func (t *gossipTransport) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	host, port, err := net.SplitHostPort(t.addr.s)
	if err != nil {
		return nil, 0, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, 0, err
	}
	return net.ParseIP(host), p, nil
}

func (t *gossipTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

// WriteToAddress delivers a packet, or loses it without an error, as UDP
// does, when the link is cut, the node is down or its queue is full.
func (t *gossipTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	now := time.Now()
	p := t.peer(a)
	if p == nil {
		return now, nil
	}
	select {
	case p.packets <- &memberlist.Packet{Buf: bytes.Clone(b), From: t.addr, Timestamp: now}:
	default:
	}
	return now, nil
}

func (t *gossipTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }

func (t *gossipTransport) IngestPacket(conn net.Conn, addr net.Addr, now time.Time, shouldClose bool) error {
	if shouldClose {
		defer conn.Close()
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, conn); err != nil {
		return fmt.Errorf("read packet: %w", err)
	}
	if buf.Len() < 1 {
		return fmt.Errorf("packet too short (%d bytes) %s", buf.Len(), memberlist.LogAddress(addr))
	}
	select {
	case t.packets <- &memberlist.Packet{Buf: buf.Bytes(), From: addr, Timestamp: now}:
	case <-t.done:
	}
	return nil
}

func (t *gossipTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// DialAddressTimeout opens a stream as a pipe to the peer's memberlist;
// a cut link or a node that is down refuses it, as no route would.
func (t *gossipTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	p := t.peer(a)
	if p == nil {
		return nil, fmt.Errorf("dial %s: no route to host", a)
	}
	near, far := net.Pipe()
	select {
	case p.streams <- far:
		return near, nil
	case <-p.done:
	case <-time.After(timeout):
	}
	near.Close()
	far.Close()
	return nil, fmt.Errorf("dial %s: connection refused", a)
}

func (t *gossipTransport) StreamCh() <-chan net.Conn { return t.streams }

func (t *gossipTransport) IngestStream(conn net.Conn) error {
	select {
	case t.streams <- conn:
		return nil
	case <-t.done:
		conn.Close()
		return fmt.Errorf("%s is shut down", t.name)
	}
}

// Shutdown takes the node off the network: what is sent to it from now
// on is lost.
func (t *gossipTransport) Shutdown() error {
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	select {
	case <-t.done:
	default:
		close(t.done)
	}
	return nil
}
