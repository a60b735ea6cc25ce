package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/shoal-hpc/shoal/probe"
)

// The probe process protocol: JSON lines over the probe's stdin and
// stdout; the probe's stderr carries its log lines.
//
// agent → probe, on stdin:
//
//	{"type":"config","kind":"latency","key":"…","beat_ms":2000,…}  first line, once
//	{"type":"peers","peers":[{"name":"n2","addr":"10.0.0.2:7949"}]}  latency: whom to ping
//	{"type":"test","id":7,"peer":"n2","addr":"10.0.0.2:7949"}        bandwidth: one test now
//
// probe → agent, on stdout:
//
//	{"type":"beat"}                                            every beat_ms
//	{"type":"sample","sample":{…RawSample…}}                  nodestate
//	{"type":"rtt","rtts":[{"peer":"n2","us":183}]}             latency, once per round
//	{"type":"bw","id":7,"peer":"n2","bytes":4194304,"ns":…}    bandwidth result (or "err")
//
// The probe exits when its stdin closes (the agent went away); the agent
// starts probes with the parent-death signal set, so a crashed agent
// leaves no probes behind. The key authenticates the probe port; it
// travels on stdin, never in argv where other users could read it.
type probeMsg struct {
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
	Peers []probePeer `json:"peers,omitempty"`

	// test and bw
	ID    uint64 `json:"id,omitempty"`
	Peer  string `json:"peer,omitempty"`
	Addr  string `json:"addr,omitempty"`
	Bytes uint64 `json:"bytes,omitempty"`
	NS    int64  `json:"ns,omitempty"`
	Err   string `json:"err,omitempty"`

	// sample and rtt
	Sample *probe.RawSample `json:"sample,omitempty"`
	RTTs   []peerRTT        `json:"rtts,omitempty"`
}

type probePeer struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
}

type peerRTT struct {
	Peer string `json:"peer"`
	US   int64  `json:"us"`
}

// Message types.
const (
	msgConfig = "config"
	msgPeers  = "peers"
	msgTest   = "test"
	msgBeat   = "beat"
	msgSample = "sample"
	msgRTT    = "rtt"
	msgBW     = "bw"
)

// maxProbeLine bounds one protocol line (a peers list of 10,000 nodes fits).
const maxProbeLine = 4 << 20

// lineWriter encodes messages one per line, safe for concurrent use.
type lineWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{enc: json.NewEncoder(w)} }

func (w *lineWriter) send(m probeMsg) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.enc.Encode(m); err != nil {
		return fmt.Errorf("write probe message %s: %w", m.Type, err)
	}
	return nil
}

// readLines decodes messages from r until it ends, calling fn for each.
func readLines(r io.Reader, fn func(probeMsg)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxProbeLine)
	for sc.Scan() {
		var m probeMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("bad probe message: %w", err)
		}
		fn(m)
	}
	return sc.Err()
}
