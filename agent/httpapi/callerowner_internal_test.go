package httpapi

import (
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// littleEndian skips t on a big-endian machine: the TCP tables below were
// read on x86-64, where the kernel prints each address word byte-swapped.
func littleEndian(t *testing.T) {
	t.Helper()
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	if b[0] != 1 {
		t.Skip("the table lines are of a little-endian kernel")
	}
}

func TestParseProcAddr(t *testing.T) {
	littleEndian(t)
	for _, c := range []struct{ in, want string }{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"0101A8C0:0016", "192.168.1.1:22"},
		{"00000000:0000", "0.0.0.0:0"},
		{"00000000000000000000000001000000:9C98", "[::1]:40088"},
		{"0000000000000000FFFF00000100007F:D149", "[::ffff:127.0.0.1]:53577"},
		{"B80D0120000000000000000001000000:01BB", "[2001:db8::1]:443"},
	} {
		got, err := parseProcAddr(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"0100007F", "0100007F:", "0100007F:10000", "0100007:0016", "0100007G:0016", "01000000000000000000000001000000"} {
		if got, err := parseProcAddr(bad); err == nil {
			t.Errorf("parseProcAddr(%q) = %v, want an error", bad, got)
		}
	}
}

// The lines are as the kernel printed them, on a server listening on port
// 0xD149 with clients on 0x9F8E (IPv4 or v4-mapped), 0x9C98 (::1) and
// 0x9F90 (closed); uids changed to a user's where one is needed.
const tcpTable = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:D149 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 614746 1 00000000f27ea5cc 100 0 0 10 0
   1: 0100007F:D149 0100007F:9F8E 01 00000000:00000000 00:00000000 00000000     0        0 614748 1 0000000075d1dabb 20 0 0 10 -1
   2: 0100007F:9F8E 0100007F:D149 01 00000000:00000000 00:00000000 00000000  1001        0 614747 2 000000001474b3c0 20 0 0 10 -1
   3: 0100007F:9F90 0100007F:D149 06 00000000:00000000 03:0000175A 00000000     0        0 0 3 00000000ba808ebe
   4: 0100007F:9F92 0100007F:D149 05 00000000:00000000 03:0000175A 00000000     0        0 0 3 00000000ba808ebf
   5: 0100007F:9F94 0100007F:D149 01 00000000:00000000 00:00000000 00000000     0        0 0 2 000000001474b3c1 20 0 0 10 -1
`

const tcp6Table = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:D149 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 614746 1 00000000f27ea5cc 100 0 0 10 0
   1: 00000000000000000000000001000000:D149 00000000000000000000000001000000:9C98 01 00000000:00000000 00:00000000 00000000     0        0 614750 1 00000000afa16f44 20 0 0 10 -1
   2: 0000000000000000FFFF00000100007F:D14A 0000000000000000FFFF00000100007F:9F8E 08 00000000:00000001 00:00000000 00000000     0        0 614748 1 0000000075d1dabb 20 4 0 10 -1
   3: 0000000000000000FFFF00000100007F:9F8E 0000000000000000FFFF00000100007F:D14A 05 00000000:00000000 03:0000175A 00000000     0        0 0 3 00000000ba808ebe
   4: 00000000000000000000000001000000:9C98 00000000000000000000000001000000:D149 01 00000000:00000000 00:00000000 00000000  1002        0 614749 2 00000000428d282f 20 0 0 10 -1
   5: 0000000000000000FFFF00000100007F:9F96 0000000000000000FFFF00000100007F:D149 01 00000000:00000000 00:00000000 00000000  1003        0 614751 2 00000000428d2830 20 0 0 10 -1
`

func TestFindTCPSocket(t *testing.T) {
	littleEndian(t)
	dir := t.TempDir()
	tables := map[string]string{"tcp": tcpTable, "tcp6": tcp6Table}
	for name, text := range tables {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ap := netip.MustParseAddrPort
	for _, c := range []struct {
		name           string
		table          string
		client, server netip.AddrPort
		uid            uint32
		found          bool
	}{
		{"established IPv4 client", "tcp", ap("127.0.0.1:40846"), ap("127.0.0.1:53577"), 1001, true},
		{"IPv4 client as a dual-stack server sees it", "tcp", ap("[::ffff:127.0.0.1]:40846"), ap("[::ffff:127.0.0.1]:53577"), 1001, true},
		{"the agent's own end is root's", "tcp", ap("127.0.0.1:53577"), ap("127.0.0.1:40846"), 0, true},
		{"TIME_WAIT of a closed client: uid 0, no inode", "tcp", ap("127.0.0.1:40848"), ap("127.0.0.1:53577"), 0, false},
		{"FIN_WAIT2 of a closed client: uid 0, no inode", "tcp", ap("127.0.0.1:40850"), ap("127.0.0.1:53577"), 0, false},
		{"established but held by no process", "tcp", ap("127.0.0.1:40852"), ap("127.0.0.1:53577"), 0, false},
		{"no such connection", "tcp", ap("127.0.0.1:1"), ap("127.0.0.1:53577"), 0, false},
		{"IPv6 loopback client", "tcp6", ap("[::1]:40088"), ap("[::1]:53577"), 1002, true},
		{"v4-mapped client on an IPv6 socket", "tcp6", ap("[::ffff:127.0.0.1]:40854"), ap("[::ffff:127.0.0.1]:53577"), 1003, true},
		{"v4-mapped client seen as IPv4", "tcp6", ap("127.0.0.1:40854"), ap("127.0.0.1:53577"), 1003, true},
		{"v4-mapped FIN_WAIT2 of a closed client", "tcp6", ap("[::ffff:127.0.0.1]:40846"), ap("[::ffff:127.0.0.1]:53578"), 0, false},
	} {
		uid, found, err := findTCPSocket(filepath.Join(dir, c.table), c.client, c.server)
		if err != nil || found != c.found || uid != c.uid {
			t.Errorf("%s: findTCPSocket(%s, %s, %s) = %d, %v, %v; want %d, %v", c.name, c.table, c.client, c.server, uid, found, err, c.uid, c.found)
		}
	}
	if _, found, err := findTCPSocket(filepath.Join(dir, "absent"), ap("127.0.0.1:1"), ap("127.0.0.1:2")); found || err != nil {
		t.Errorf("a missing table: found %v, %v; want neither", found, err)
	}
}

// loopbackRequest is a request as the server sees it on a real loopback
// connection, and the client's end of that connection.
func loopbackRequest(t *testing.T) (*http.Request, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	r, err := http.NewRequest(http.MethodPost, "https://agent.shoal/v1/exec", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.RemoteAddr = server.RemoteAddr().String()
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, server.LocalAddr())), client
}

// TestRootGetsNoShortcutOverTCP: over TCP the owner of the caller's socket
// must be the job's owner. A socket of root's is what a root-owned
// forwarder makes of any remote caller; over the local socket, where the
// kernel names the process itself, root may present any job's capability.
func TestRootGetsNoShortcutOverTCP(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs a socket of root's")
	}
	r, _ := loopbackRequest(t)
	if err := callerIsOwner(r, "nobody"); err == nil || !strings.Contains(err.Error(), "you are uid 0") {
		t.Errorf("root's TCP socket with nobody's capability: %v, want a refusal", err)
	}
	if err := callerIsOwner(r, "root"); err != nil {
		t.Errorf("root's TCP socket with root's capability: %v", err)
	}
	local := r.WithContext(context.WithValue(r.Context(), localPeerKey{}, localPeer{uid: 0}))
	if err := callerIsOwner(local, "nobody"); err != nil {
		t.Errorf("root over the local socket with nobody's capability: %v", err)
	}
}

// TestClosedClientIsNobody: once the client has closed its end, the row
// the kernel keeps for it (FIN_WAIT2, then TIME_WAIT) shows uid 0 and
// belongs to no process; it must name nobody, least of all root.
func TestClosedClientIsNobody(t *testing.T) {
	r, client := loopbackRequest(t)
	me := uint32(os.Geteuid())
	if uid, _, err := callerUID(r); err != nil || uid != me {
		t.Fatalf("open connection: uid %d, %v; want %d", uid, err, me)
	}
	clientEnd := netip.MustParseAddrPort(client.LocalAddr().String())
	serverEnd := netip.MustParseAddrPort(client.RemoteAddr().String())
	client.Close()
	deadline := time.Now().Add(10 * time.Second)
	for state := tcpEstablished; state == tcpEstablished; state = tcpState(t, clientEnd, serverEnd) {
		if time.Now().After(deadline) {
			t.Fatal("the closed client's socket stays established")
		}
		time.Sleep(5 * time.Millisecond) // polling the kernel's table, not waiting for a goroutine
	}
	if uid, _, err := callerUID(r); err == nil {
		t.Errorf("closed client: uid %d, want no owner", uid)
	}
	if err := callerIsOwner(r, "nobody"); err == nil {
		t.Error("a closed client passed as the owner")
	}
}

// tcpState is the state of the IPv4 socket whose ends are local and remote
// in /proc/net/tcp, or "" when it has none.
func tcpState(t *testing.T, local, remote netip.AddrPort) string {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		fs := strings.Fields(line)
		if len(fs) < 4 {
			continue
		}
		l, err1 := parseProcAddr(fs[1])
		r, err2 := parseProcAddr(fs[2])
		if err1 == nil && err2 == nil && sameEnd(l, local) && sameEnd(r, remote) {
			return fs[3]
		}
	}
	return ""
}
