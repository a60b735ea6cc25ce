package nodestate

import (
	"encoding/json"
	"testing"
)

// fullState and fullRow set every field, so that the pinned encodings
// below name every key.
func fullState() NodeState {
	return NodeState{Name: "n1", Boot: 1, Seq: 2, Addr: "10.0.0.1", GossipPort: 3, RaftPort: 4, HTTPPort: 5, ProbePort: 6, Leaving: true,
		Raft: RaftInfo{Member: true, Proposal: []string{"n1"}, Client: true, Voter: true, Leader: true, Term: 7, Index: 8, ContactMs: 9, Want: []string{"n2"}, Fault: "full"},
		Static: Static{Hostname: "h", CPUModel: "c", Cores: 1, Threads: 2, MHz: 3, MemTotal: 4, PEs: []PE{{Kind: "gpu", Model: "m", Count: 1, MemBytes: 2}},
			Switch: "sw", Confined: true, Unconfined: "u", Features: []string{"f"}},
		Dyn: Dynamic{Load: Means{Now: 1, M1: 2, M5: 3, M15: 4}, CPUUtil: Means{Now: 5}, MemAvail: Means{Now: 6}, NetFlow: Means{Now: 7},
			NetRxBytesPerSec: 8, NetTxBytesPerSec: 9, NetWindowMs: 13, Users: 10, SampledAt: 11},
		Probes:    []ProbeBeat{{Kind: "k", State: "s", PID: 1, Restarts: 2, Beat: 3}},
		Coord:     &Coord{Vec: []float64{1}, Error: 2, Adjust: 3, Height: 4},
		Link:      &LinkState{Change: "slower", Mbps: 1, Since: 2, At: 3},
		Published: 12}
}

func fullRow() NetRow {
	return NetRow{Node: "n1", Boot: 1, V: 3, Base: 2, Gone: []string{"n3"}, Cells: []NetEntry{{Peer: "n2", RTT1us: 1, RTT5us: 2, AvailMbps: 3, PeakMbps: 4,
		BWAt: 5, RTTAt: 6, OutMbps: 7, InMbps: 8, PeakOutMbps: 9, PeakInMbps: 10, OutAt: 11, InAt: 12, CarriedOutMbps: 13, CarriedInMbps: 14}}}
}

// TestWireKeysPinned: a field's Go name may change, its key on the wire
// may not (agents of two versions gossip together, and rows reach
// servers of either).
func TestWireKeysPinned(t *testing.T) {
	t.Parallel()
	s, r := fullState(), fullRow()
	for _, tc := range []struct {
		v    any
		want string
	}{
		{&s, `{"name":"n1","boot":1,"seq":2,"addr":"10.0.0.1","gport":3,"rport":4,"hport":5,"pport":6,"leaving":true,"raft":{"m":true,"p":["n1"],"k":true,"v":true,"l":true,"t":7,"i":8,"c":9,"w":["n2"],"f":"full"},"static":{"host":"h","cpu":"c","cores":1,"threads":2,"mhz":3,"mem":4,"pes":[{"kind":"gpu","model":"m","count":1,"mem":2}],"sw":"sw","cg":true,"ncg":"u","ft":["f"]},"dyn":{"load":{"now":1,"1m":2,"5m":3,"15m":4},"cpu":{"now":5,"1m":0,"5m":0,"15m":0},"mema":{"now":6,"1m":0,"5m":0,"15m":0},"flow":{"now":7,"1m":0,"5m":0,"15m":0},"rx":8,"tx":9,"win":13,"users":10,"at":11},"probes":[{"kind":"k","state":"s","pid":1,"restarts":2,"beat":3}],"co":{"v":[1],"e":2,"a":3,"h":4},"link":{"change":"slower","mbps":1,"since":2,"at":3},"pub":12}`},
		{&r, `{"node":"n1","boot":1,"v":3,"cells":[{"p":"n2","r1":1,"r5":2,"bw":3,"pk":4,"bt":5,"rt":6,"bo":7,"bi":8,"po":9,"pi":10,"bot":11,"bit":12,"co":13,"ci":14}],"base":2,"gone":["n3"]}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("encoded\n%s\nwant\n%s", b, tc.want)
		}
	}
}
