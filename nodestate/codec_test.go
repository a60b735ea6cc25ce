package nodestate

import (
	"errors"
	"testing"
)

func sampleState() NodeState {
	return NodeState{
		Name: "n1", Boot: 1700000000000000000, Seq: 7, Addr: "127.0.0.1",
		GossipPort: 7946, RaftPort: 7947, HTTPPort: 7948,
		Static: Static{Hostname: "n1", CPUModel: "Xeon", Cores: 8, Threads: 16, MHz: 2400, MemTotal: 64 << 30,
			PEs: []PE{{Kind: "cpu", Count: 16}, {Kind: "gpu", Model: "A100", Count: 2, MemBytes: 80 << 30}}},
		Dyn: Dynamic{Load: Means{1, 2, 3, 4}, CPUUtil: Means{10, 20, 30, 40}, MemAvail: Means{1e9, 1e9, 1e9, 1e9},
			NetFlow: Means{5e6, 4e6, 3e6, 2e6}, Users: 3, SampledAt: 1700000000000},
	}
}

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	s := sampleState()
	b, err := EncodeState(&s)
	if err != nil {
		t.Fatal(err)
	}
	// A broadcast must fit one UDP packet with room for memberlist's framing.
	if len(b) > 1000 {
		t.Fatalf("state without network row is %d bytes; must stay under 1000 to fit a UDP packet", len(b))
	}
	got, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != s.Name || got.Seq != s.Seq || got.Static.PEs[1].Count != 2 || got.Dyn.NetFlow.M15 != 2e6 {
		t.Fatalf("round trip changed the state: %+v", got)
	}
	all, err := EncodeStates([]NodeState{s, s})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := DecodeStates(all)
	if err != nil || len(ss) != 2 {
		t.Fatalf("DecodeStates = %v, %v", ss, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	good := sampleState()
	enc := func(mut func(*NodeState)) []byte {
		s := good.Clone()
		mut(&s)
		b, _ := EncodeState(&s)
		return b
	}
	cases := map[string][]byte{
		"empty":         nil,
		"header only":   {msgState},
		"wrong type":    append([]byte{'x', wireV1}, []byte(`{}`)...),
		"wrong version": append([]byte{msgState, 9}, []byte(`{"name":"a"}`)...),
		"not json":      append([]byte{msgState, wireV1}, []byte(`{"name":`)...),
		"no name":       enc(func(s *NodeState) { s.Name = "" }),
		"bad port":      enc(func(s *NodeState) { s.HTTPPort = 70000 }),
		"negative load": enc(func(s *NodeState) { s.Dyn.Load.M5 = -1 }),
		"negative pe":   enc(func(s *NodeState) { s.Static.PEs[0].Count = -2 }),
		"pushpull as broadcast": func() []byte {
			b, _ := EncodeStates([]NodeState{good})
			return b
		}(),
	}
	for name, b := range cases {
		if _, err := DecodeState(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	s := sampleState()
	b, _ := EncodeState(&s)
	f.Add(b)
	bb, _ := EncodeStates([]NodeState{s})
	f.Add(bb)
	f.Add([]byte{msgState, wireV1, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeState(b); err == nil {
			// Whatever decodes must validate and re-encode.
			if err := s.Validate(); err != nil {
				t.Fatalf("decoded state fails validation: %v", err)
			}
			if _, err := EncodeState(&s); err != nil {
				t.Fatal(err)
			}
		}
		if ss, err := DecodeStates(b); err == nil {
			for i := range ss {
				if ss[i].Validate() != nil {
					t.Fatal("decoded states fail validation")
				}
			}
		}
	})
}
