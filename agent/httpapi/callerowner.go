package httpapi

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// A job capability is a string, and a string can leak: a job that prints
// its environment, a file left readable. So a capability alone does not
// act as the job's owner: the process presenting it must also be the
// owner's on this node, as the kernel says. Over the local socket that is
// SO_PEERCRED, and root's processes may present any job's capability
// there. Over TCP, which job processes use through SHOAL_AGENT_ADDR when
// the agent has no socket, the connection must come from this host, and
// the kernel's table of TCP sockets names the uid that owns its client end
// (what identd answers, without asking the client); that uid must be the
// owner's exactly. Root gets no shortcut over TCP: a root-owned forwarder
// (socat, ssh -L, docker-proxy) makes any remote caller's connection a
// socket of root's, and a client that has closed its end leaves a row of
// uid 0 behind. A capability sent from another host is refused: a job's
// processes talk to their own node's agent.

// callerIsOwner says why r may not act as owner with a job capability,
// or nil when it comes from a process of owner's on this node, or of
// root's over the local socket.
func callerIsOwner(r *http.Request, owner string) error {
	uid, local, err := callerUID(r)
	if err != nil {
		return fmt.Errorf("a job capability is taken only from the job's own processes on this node: %w", err)
	}
	if uid == 0 && local {
		return nil
	}
	u, err := user.Lookup(owner)
	if err != nil {
		return fmt.Errorf("the job's owner %s has no account on this node: %w", owner, err)
	}
	if u.Uid != strconv.FormatUint(uint64(uid), 10) {
		return fmt.Errorf("the capability is %s's and you are uid %d", owner, uid)
	}
	return nil
}

// callerUID is the uid of the process that sent r and whether it came
// over the local socket: its peer credentials there, the owner of its TCP
// socket on this host otherwise.
func callerUID(r *http.Request) (uid uint32, local bool, err error) {
	if p, ok := peerOf(r); ok {
		return p.uid, true, p.err
	}
	remote, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return 0, false, fmt.Errorf("caller address %q: %w", r.RemoteAddr, err)
	}
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if la == nil {
		return 0, false, errors.New("no local address for the connection")
	}
	server, err := netip.ParseAddrPort(la.String())
	if err != nil {
		return 0, false, fmt.Errorf("local address %q: %w", la, err)
	}
	uid, err = tcpSocketOwner(remote, server)
	return uid, false, err
}

// errNotThisHost is tcpSocketOwner's answer for a connection whose client
// end is not a socket of this host (network namespace).
var errNotThisHost = errors.New("the connection does not come from this host")

// tcpSocketOwner finds, in the kernel's TCP tables, the socket whose own
// end is client and whose peer is server, and returns its owner's uid.
func tcpSocketOwner(client, server netip.AddrPort) (uint32, error) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, found, err := findTCPSocket(table, client, server)
		if err != nil {
			return 0, err
		}
		if found {
			return uid, nil
		}
	}
	return 0, errNotThisHost
}

// findTCPSocket scans one table (/proc/net/tcp or tcp6): "sl local_address
// rem_address st tx:rx tr:when retrnsmt uid timeout inode ...", addresses
// as hex words in host byte order and ports in hex. Only an established
// socket that a process still holds counts (state 01, inode not 0): once
// the client closes its end the kernel keeps a row in FIN_WAIT2 or
// TIME_WAIT that belongs to no process and shows uid 0 and inode 0, and
// its port is free for anyone to bind.
func findTCPSocket(table string, local, remote netip.AddrPort) (uint32, bool, error) {
	f, err := os.Open(table)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil // no IPv6 in this kernel
	}
	if err != nil {
		return 0, false, fmt.Errorf("read the TCP table: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[3] != tcpEstablished || fs[9] == "0" {
			continue
		}
		l, err1 := parseProcAddr(fs[1])
		r, err2 := parseProcAddr(fs[2])
		if err1 != nil || err2 != nil || !sameEnd(l, local) || !sameEnd(r, remote) {
			continue
		}
		uid, err := strconv.ParseUint(fs[7], 10, 32)
		if err != nil {
			return 0, false, fmt.Errorf("read the TCP table: uid %q: %w", fs[7], err)
		}
		return uint32(uid), true, nil
	}
	if err := sc.Err(); err != nil {
		return 0, false, fmt.Errorf("read the TCP table: %w", err)
	}
	return 0, false, nil
}

// tcpEstablished is TCP_ESTABLISHED as the TCP tables print a socket's state.
const tcpEstablished = "01"

// sameEnd compares two socket ends, an IPv4 address and its IPv4-mapped
// IPv6 form being one.
func sameEnd(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// parseProcAddr reads "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6): each 32-bit word of the address as the kernel holds it in memory,
// printed as a number of this machine's byte order.
func parseProcAddr(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || (len(h) != 8 && len(h) != 32) {
		return netip.AddrPort{}, fmt.Errorf("bad socket address %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad socket address %q: %w", s, err)
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr, uint16(port)), nil
}
