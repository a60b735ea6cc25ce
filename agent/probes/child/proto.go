package child

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/shoal-hpc/shoal/probe"
)

// Msg is one line of the protocol, in either direction (see the package
// comment); the fields a Type does not use are left empty.
type Msg struct {
	Type string `json:"type"`

	// config
	Kind string `json:"kind,omitempty"`
	Node string `json:"node,omitempty"`
	Key  []byte `json:"key,omitempty"`
	// CA is the PEM of the trusted CA certificates (public): bandwidth
	// tests run over TLS and verify the peer's probe server with it.
	CA        []byte `json:"ca,omitempty"`
	BeatMS    int64  `json:"beat_ms,omitempty"`
	SampleMS  int64  `json:"sample_ms,omitempty"`
	LatencyMS int64  `json:"latency_ms,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`

	// peers
	Peers []Peer `json:"peers,omitempty"`

	// test and bw
	ID    uint64 `json:"id,omitempty"`
	Peer  string `json:"peer,omitempty"`
	Addr  string `json:"addr,omitempty"`
	Bytes uint64 `json:"bytes,omitempty"`
	NS    int64  `json:"ns,omitempty"`
	// RevBytes and RevNS are the reverse direction of a bw result (peer
	// to this node); zero when it was not measured.
	RevBytes uint64 `json:"rev_bytes,omitempty"`
	RevNS    int64  `json:"rev_ns,omitempty"`
	// Carried and RevCarried are what this node's link carried each way
	// while the test ran, the test included, in Mbit/s
	// (probe.BandwidthResult); zero when not read.
	Carried    float64 `json:"carried,omitempty"`
	RevCarried float64 `json:"rev_carried,omitempty"`
	Err        string  `json:"err,omitempty"`
	// Check asks for a link check (probe.BandwidthCheck) instead of a
	// bandwidth test, each half within TimeoutMS when set; the bw result
	// echoes it.
	Check bool `json:"check,omitempty"`

	// sample and rtt
	Sample *probe.RawSample `json:"sample,omitempty"`
	RTTs   []PeerRTT        `json:"rtts,omitempty"`
}

// Peer is a node the latency probe pings: its name and probe address.
type Peer struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
}

// PeerRTT is one latency measurement: the median RTT to Peer in
// microseconds.
type PeerRTT struct {
	Peer string `json:"peer"`
	US   int64  `json:"us"`
}

// Message types.
const (
	TypeConfig = "config"
	TypePeers  = "peers"
	TypeTest   = "test"
	TypeBeat   = "beat"
	TypeSample = "sample"
	TypeRTT    = "rtt"
	TypeBW     = "bw"
)

// MaxLine bounds one protocol line (a peers list of 10,000 nodes fits).
const MaxLine = 4 << 20

// Writer encodes messages one per line, safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewWriter writes messages to w.
func NewWriter(w io.Writer) *Writer { return &Writer{enc: json.NewEncoder(w)} }

// Send writes m as one line.
func (w *Writer) Send(m Msg) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.enc.Encode(m); err != nil {
		return fmt.Errorf("write probe message %s: %w", m.Type, err)
	}
	return nil
}

// ReadLines decodes messages from r until it ends, calling fn for each.
func ReadLines(r io.Reader, fn func(Msg)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		var m Msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("bad probe message: %w", err)
		}
		fn(m)
	}
	return sc.Err()
}
