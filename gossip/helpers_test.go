package gossip

import "github.com/shoal-hpc/shoal/nodestate"

// The wire's message types and version (nodestate/codec.go), spelled out
// so that tests can forge messages byte by byte.
const (
	msgState  byte = 's'
	msgStates byte = 'S'
	msgCoord  byte = 'c'
	wireV1    byte = 1
)

func sampleState() nodestate.NodeState {
	return nodestate.NodeState{
		Name: "n1", Boot: 1700000000000000000, Seq: 7, Addr: "127.0.0.1",
		GossipPort: 7946, RaftPort: 7947, HTTPPort: 7948,
		Static: nodestate.Static{Hostname: "n1", CPUModel: "Xeon", Cores: 8, Threads: 16, MHz: 2400, MemTotal: 64 << 30,
			PEs: []nodestate.PE{{Kind: "cpu", Count: 16}, {Kind: "gpu", Model: "A100", Count: 2, MemBytes: 80 << 30}}},
		Dyn: nodestate.Dynamic{Load: nodestate.Means{Now: 1, M1: 2, M5: 3, M15: 4}, CPUUtil: nodestate.Means{Now: 10, M1: 20, M5: 30, M15: 40}, MemAvail: nodestate.Means{Now: 1e9, M1: 1e9, M5: 1e9, M15: 1e9},
			NetFlow: nodestate.Means{Now: 5e6, M1: 4e6, M5: 3e6, M15: 2e6}, Users: 3, SampledAt: 1700000000000},
	}
}
