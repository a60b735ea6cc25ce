package raftfsm

import (
	"bytes"
	"io"
	"testing"
)

func FuzzDecode(f *testing.F) {
	for _, l := range scriptedTrace(f).log {
		f.Add(l.Data)
	}
	f.Add([]byte(`{"v":1,"type":"kill_job","at":"2026-11-22T10:00:00+05:00","body":{"id":1,"user":"a"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Encode(c.Type, c.At, c.Body)
		if err != nil {
			t.Fatalf("decoded %+v but cannot encode it: %v", c, err)
		}
		c2, err := Decode(again)
		if err != nil || c2.Type != c.Type || !c2.At.Equal(c.At) || c2.V != c.V {
			t.Fatalf("round trip: %+v -> %+v, %v", c, c2, err)
		}
	})
}

// FuzzApply applies up to 8 newline-separated log entries to a populated FSM: no panic, every
// refusal leaves the state as it was, and the invariants hold after every entry.
func FuzzApply(f *testing.F) {
	base := scriptedTrace(f)
	baseSnap := snapshotBytes(f, base.f)
	for _, l := range base.log {
		f.Add(l.Data)
	}
	var all [][]byte
	for _, l := range base.log {
		all = append(all, l.Data)
	}
	f.Add(bytes.Join(all[:8], []byte("\n")))
	f.Add(bytes.Join(all[8:16], []byte("\n")))
	f.Add([]byte("{}\n[]\nnull"))
	f.Add([]byte(`{"v":1,"type":"submit_job","at":"0000-01-01T00:30:00+01:00","body":{"request_id":"y","owner":"o","spec":{"cmd":["x"],"np":1,"oversubscribe":false,"max_attempts":0}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsm := New()
		if err := fsm.Restore(io.NopCloser(bytes.NewReader(baseSnap))); err != nil {
			t.Fatal(err)
		}
		for i, entry := range bytes.SplitN(data, []byte("\n"), 8) {
			before := stateBytes(t, fsm)
			res, ok := fsm.Apply(rawLog(uint64(1000+i), string(entry))).(Result)
			if !ok {
				t.Fatalf("Apply returned a %T", res)
			}
			if res.Err != nil {
				if after := stateBytes(t, fsm); !bytes.Equal(before, after) {
					t.Fatalf("refused entry %q changed the state: %v", entry, res.Err)
				}
				continue
			}
			if err := invariants(fsm.State()); err != nil {
				t.Fatalf("after %q: %v", entry, err)
			}
		}
		// Whatever happened, the state still snapshots and restores to the same bytes.
		snap := snapshotBytes(t, fsm)
		g := New()
		if err := g.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
			t.Fatalf("restore own snapshot: %v", err)
		}
		if !bytes.Equal(snapshotBytes(t, g), snap) {
			t.Fatalf("snapshot not stable through restore")
		}
	})
}
