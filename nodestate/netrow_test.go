package nodestate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func bigRow(n int, bw float64) []NetEntry {
	var row []NetEntry
	for i := range n {
		row = append(row, NetEntry{Peer: fmt.Sprintf("node%03d", i), RTT1us: 183, RTT5us: 191, AvailMbps: bw, PeakMbps: 948.7,
			BWAt: 1763789912345, RTTAt: 1763789990123,
			OutMbps: bw, InMbps: bw, PeakOutMbps: 948.7, PeakInMbps: 948.7, OutAt: 1763789912345, InAt: 1763789912345})
	}
	return row
}

// typicalState is a compute node's state as an agent gossips it.
func typicalState(name string) NodeState {
	return NodeState{Name: name, Boot: 1763790000000000000, Seq: 12345, Addr: "10.1.2.42", GossipPort: 7946, RaftPort: 7947,
		HTTPPort: 7948, ProbePort: 7949, Raft: RaftInfo{Member: true},
		Static: Static{Hostname: name + ".cluster.example.org", CPUModel: "Intel(R) Xeon(R) CPU E5-2670 v3 @ 2.30GHz", Cores: 12, Threads: 24, MHz: 2300,
			MemTotal: 64 << 30, PEs: []PE{{Kind: "cpu", Count: 24}}},
		Dyn: Dynamic{Load: Means{Now: 1.23, M1: 1.5, M5: 1.7, M15: 1.8}, CPUUtil: Means{Now: 12.5, M1: 13.25, M5: 14.125, M15: 15.5}, MemAvail: Means{Now: 3.4e10, M1: 3.41e10, M5: 3.39e10, M15: 3.4e10},
			NetFlow: Means{Now: 12345.6, M1: 23456.7, M5: 34567.8, M15: 45678.9}, Users: 3, SampledAt: 1763790000123,
			NetRxBytesPerSec: 118_750_000, NetTxBytesPerSec: 117_500_001}, // a saturated 1 Gbit/s link both ways
		// The coordinate rides on every broadcast too.
		Coord: &Coord{Vec: []float64{-1234.56, 987.65, -432.1, 2345.67, -88.88, 123.45, -1.23, 456.78}, Error: 0.1234,
			Adjust: -12.34, Height: 45.67},
		Probes: []ProbeBeat{{Kind: "nodestate", State: "running", PID: 12345, Restarts: 0, Beat: 1763790000000}, {Kind: "latency", State: "running", PID: 12346, Restarts: 0, Beat: 1763790000000},
			{Kind: "bandwidth", State: "running", PID: 12347, Restarts: 0, Beat: 1763790000000}}}
}

// legacyState is a state as agents before rows left gossip sent it: the
// row, its version and the trimmed flag inline.
type legacyState struct {
	NodeState
	Net        []NetEntry `json:"net,omitempty"`
	NetV       uint64     `json:"nv,omitempty"`
	NetOmitted bool       `json:"no,omitempty"`
}

// TestNetRow_LegacyStateDecodes: a state from an older agent, row and
// all, decodes (rolling upgrade), and re-encodes without the row.
func TestNetRow_LegacyStateDecodes(t *testing.T) {
	t.Parallel()
	old := legacyState{NodeState: typicalState("old"), Net: bigRow(99, 941.2), NetV: 7}
	body, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeState(append([]byte{msgState, wireV1}, body...))
	if err != nil {
		t.Fatalf("legacy state refused: %v", err)
	}
	if s.Name != "old" || s.Seq != 12345 || len(s.Probes) != 3 {
		t.Fatalf("legacy state decoded wrong: %+v", s)
	}
	b, err := EncodeState(&s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"net"`)) || bytes.Contains(b, []byte(`"p":"node`)) {
		t.Fatalf("re-encoded state carries the row: %s", b)
	}
	// A broadcast holds the whole state in one packet (memberlist's 1,400
	// bytes less framing and encryption): nothing is trimmed any more.
	if len(b) > 1100 {
		t.Fatalf("state of %d bytes does not fit one packet", len(b))
	}
}

func TestNetRow_Codec(t *testing.T) {
	t.Parallel()
	r := NetRow{Node: "a", Boot: 5, V: 2, Cells: bigRow(3, 100)}
	b, err := EncodeNetRow(&r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeNetRow(b)
	if err != nil || got.Node != "a" || got.V != 2 || len(got.Cells) != 3 || got.Cells[2] != r.Cells[2] {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if !(&NetRow{Boot: 5, V: 3}).Newer(&r) || !(&NetRow{Boot: 6, V: 1}).Newer(&r) || (&NetRow{Boot: 5, V: 2}).Newer(&r) || (&NetRow{Boot: 4, V: 9}).Newer(&r) {
		t.Fatal("Newer orders by (boot, v)")
	}
	for name, tc := range map[string]struct {
		body string
		want error
		msg  string
	}{
		"no owner":   {`{"boot":1,"v":1,"cells":[]}`, ErrMalformed, "row owner"},
		"empty peer": {`{"node":"a","cells":[{"p":""}]}`, ErrMalformed, "bad network entry"},
		"negative":   {`{"node":"a","cells":[{"p":"b","bw":-1}]}`, ErrMalformed, "bad network entry"},
		"not json":   {`{"node":`, ErrMalformed, "network row"},
		"too many":   {string(mustJSON(t, NetRow{Node: "a", Cells: make([]NetEntry, MaxNetCells+1)})), ErrTooLarge, "at most 16384"},
		"too big":    {`{"node":"a","pad":"` + strings.Repeat("x", MaxNetRowBytes) + `"}`, ErrTooLarge, "at most 4194304"},
	} {
		_, err := DecodeNetRow([]byte(tc.body))
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %v mentioning %q", name, err, tc.want, tc.msg)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
