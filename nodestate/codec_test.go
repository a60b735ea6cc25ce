package nodestate

import (
	"bytes"
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
		"empty":           nil,
		"header only":     {msgState},
		"wrong type":      append([]byte{'x', wireV1}, []byte(`{}`)...),
		"wrong version":   append([]byte{msgState, 9}, []byte(`{"name":"a"}`)...),
		"not json":        append([]byte{msgState, wireV1}, []byte(`{"name":`)...),
		"no name":         enc(func(s *NodeState) { s.Name = "" }),
		"bad port":        enc(func(s *NodeState) { s.HTTPPort = 70000 }),
		"negative load":   enc(func(s *NodeState) { s.Dyn.Load.M5 = -1 }),
		"negative pe":     enc(func(s *NodeState) { s.Static.PEs[0].Count = -2 }),
		"negative window": enc(func(s *NodeState) { s.Dyn.NetWindowMs = -1 }),
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

// TestDecodeTrafficWindow: a sample's traffic window travels with its
// rates, and a state from an agent that predates it (no "win" key)
// decodes with the window unknown, as zero.
func TestDecodeTrafficWindow(t *testing.T) {
	t.Parallel()
	s := sampleState()
	s.Dyn.NetRxBytesPerSec, s.Dyn.NetTxBytesPerSec, s.Dyn.NetWindowMs = 8e6, 1e6, 210
	b, err := EncodeState(&s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dyn.NetWindowMs != 210 || got.Dyn.NetRxBytesPerSec != 8e6 {
		t.Errorf("decoded window %d ms, rx %.0f; want 210 ms, 8e6", got.Dyn.NetWindowMs, got.Dyn.NetRxBytesPerSec)
	}
	old := []byte(`{"name":"n1","boot":1,"seq":2,"addr":"10.0.0.1","gport":3,"rport":4,"hport":5,` +
		`"static":{"host":"n1","cores":2,"threads":2,"mhz":1,"mem":1},` +
		`"dyn":{"load":{"now":1,"1m":1,"5m":1,"15m":1},"cpu":{"now":0,"1m":0,"5m":0,"15m":0},` +
		`"mema":{"now":0,"1m":0,"5m":0,"15m":0},"flow":{"now":0,"1m":0,"5m":0,"15m":0},"rx":5,"tx":6,"users":0,"at":1700000000000}}`)
	got, err = DecodeState(append([]byte{msgState, wireV1}, old...))
	if err != nil {
		t.Fatalf("state of an agent without traffic windows: %v", err)
	}
	if got.Dyn.NetWindowMs != 0 || got.Dyn.NetRxBytesPerSec != 5 || got.Dyn.SampledAt != 1700000000000 {
		t.Errorf("old agent's state decoded as window %d ms, rx %.0f, at %d; want 0, 5, 1700000000000",
			got.Dyn.NetWindowMs, got.Dyn.NetRxBytesPerSec, got.Dyn.SampledAt)
	}
	s.Dyn.NetWindowMs = 0
	if b, _ := EncodeState(&s); bytes.Contains(b, []byte(`"win"`)) {
		t.Errorf("an unknown window is sent: %s", b)
	}
}

func FuzzDecode(f *testing.F) {
	s := sampleState()
	b, _ := EncodeState(&s)
	f.Add(b)
	s.Dyn.NetWindowMs = 3000
	b, _ = EncodeState(&s)
	f.Add(b)
	f.Add(append([]byte{msgState, wireV1}, []byte(`{"name":"a","dyn":{"rx":1,"tx":2,"at":3}}`)...))
	f.Add(append([]byte{msgState, wireV1}, []byte(`{"name":"a","dyn":{"rx":1,"tx":2,"win":-5,"at":3}}`)...))
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
