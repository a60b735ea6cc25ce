package netns

import "testing"

func TestParseProcNet(t *testing.T) {
	in := "Tcp: RtoAlgorithm RtoMin RetransSegs InErrs\nTcp: 1 200 17 0\n" +
		"Udp: InDatagrams\nUdp: 5\n" +
		"TcpExt: TCPLossProbes TCPTimeouts\nTcpExt: 3 2\n"
	got := parseProcNet(in)
	for k, want := range map[string]uint64{"Tcp:RetransSegs": 17, "Udp:InDatagrams": 5, "TcpExt:TCPTimeouts": 2, "TcpExt:TCPLossProbes": 3} {
		if got[k] != want {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], want, got)
		}
	}
}

func TestParseTbfDrops(t *testing.T) {
	in := `qdisc noqueue 0: dev lo root refcnt 2 
 Sent 0 bytes 0 pkt (dropped 9, overlimits 0 requeues 0) 
 backlog 0b 0p requeues 0
qdisc tbf 95a9: dev eth0 root refcnt 3 rate 200Mbit burst 64Kb lat 20ms 
 Sent 3976919 bytes 19463 pkt (dropped 4, overlimits 656 requeues 0) 
 backlog 0b 0p requeues 0
qdisc tbf 95aa: dev snt90u1a root refcnt 3 rate 60Mbit burst 64Kb lat 20ms 
 Sent 1 bytes 1 pkt (dropped 30, overlimits 656 requeues 0) 
 backlog 0b 0p requeues 0
`
	if got := parseTbfDrops(in); got != 34 {
		t.Errorf("drops = %d, want 34 (the two tbf qdiscs, not noqueue's)", got)
	}
}
