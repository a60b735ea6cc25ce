package nodestate

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestPeekVersion checks that a broadcast's version is read from the
// bytes EncodeState writes, and that anything else is left to the full
// decoder instead of being misread.
func TestPeekVersion(t *testing.T) {
	t.Parallel()
	s := sampleState()
	s.Boot, s.Seq = -5, 1<<63+3
	b, err := EncodeState(&s)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := PeekVersion(b)
	if !ok || string(v.Name) != s.Name || v.Boot != s.Boot || v.Seq != s.Seq {
		t.Fatalf("peekVersion = %s boot %d seq %d, %v; want %s boot %d seq %d", v.Name, v.Boot, v.Seq, ok, s.Name, s.Boot, s.Seq)
	}
	// Another encoder's field order, an escaped name, a push/pull
	// message, a truncated one: not read, decoded whole.
	reordered, _ := json.Marshal(map[string]any{"seq": 1, "boot": 2, "name": "n1"})
	escaped := s.Clone()
	escaped.Name = `n"1`
	eb, _ := EncodeState(&escaped)
	many, _ := EncodeStates([]NodeState{s})
	for name, m := range map[string][]byte{
		"reordered": append([]byte{msgState, wireV1}, reordered...),
		"escaped":   eb,
		"push/pull": many,
		"truncated": b[:len(`s1{"name":"n1","boot":-5`)],
		"version 9": append([]byte{msgState, 9}, b[2:]...),
		"no seq":    append([]byte{msgState, wireV1}, []byte(`{"name":"n1","boot":3}`)...),
		"big seq":   append([]byte{msgState, wireV1}, []byte(`{"name":"n1","boot":3,"seq":99999999999999999999}`)...),
		"empty":     nil,
	} {
		if v, ok := PeekVersion(m); ok {
			t.Errorf("%s: peekVersion read %s boot %d seq %d from %q; want it left to the decoder", name, v.Name, v.Boot, v.Seq, m)
		}
	}
}

// TestDecodeFreshStates checks the push/pull shortcut: states the table
// holds are skipped unread, newer ones decoded, a fresh invalid state or
// bad JSON still rejects the whole payload, and with nothing held it
// decodes exactly what DecodeStates does.
func TestDecodeFreshStates(t *testing.T) {
	t.Parallel()
	held := sampleState()
	// Quotes and brackets inside a string must not end the element early:
	// a split that got them wrong would fall back to decoding everything,
	// which refuses this payload (below).
	held.Static.CPUModel = `Xeon "}], {["`
	newer := held.Clone()
	newer.Name, newer.Static.Hostname = "n2", "n2"
	other := held.Clone()
	other.Name, other.Seq = "n3", 1
	old2 := newer.Clone()
	old2.Seq = newer.Seq - 1
	stale := staleAgainst(held, old2)
	// held's copy carries a body the decoder would refuse: skipped, so
	// not decoded.
	hb, _ := EncodeState(&held)
	heldBody := append(append([]byte(nil), hb[2:len(hb)-1]...), []byte(`,"static":"not an object"}`)...)
	nb, _ := EncodeState(&newer)
	ob, _ := EncodeState(&other)
	payload := append([]byte{msgStates, wireV1, '['}, heldBody...)
	payload = append(append(append(append(append(payload, ','), nb[2:]...), ' ', ',', '\n'), ob[2:]...), ']')
	if _, err := DecodeStates(payload); err == nil {
		t.Fatal("DecodeStates takes the test's payload; the held state must be one it refuses")
	}
	got, err := DecodeFreshStates(payload, stale)
	if err != nil {
		t.Fatalf("DecodeFreshStates: %v", err)
	}
	if len(got) != 2 || got[0].Name != "n2" || got[1].Name != "n3" || got[0].Static.Hostname != "n2" {
		t.Fatalf("decoded %+v, want n2 and n3 (n1 is held)", got)
	}
	// A fresh invalid state rejects the payload, as does bad JSON.
	bad := newer.Clone()
	bad.Seq, bad.HTTPPort = newer.Seq+1, 70000
	bb, _ := EncodeStates([]NodeState{held, bad})
	if _, err := DecodeFreshStates(bb, stale); !errors.Is(err, ErrMalformed) {
		t.Errorf("a fresh invalid state: err = %v, want ErrMalformed", err)
	}
	for name, b := range map[string][]byte{
		"truncated": payload[:len(payload)-1],
		"broadcast": hb,
		"object":    append([]byte{msgStates, wireV1}, nb[2:]...),
		"null":      {msgStates, wireV1, 'n', 'u', 'l', 'l'},
		"empty":     {msgStates, wireV1, '[', ']'},
	} {
		want, werr := DecodeStates(b)
		got, gerr := DecodeFreshStates(b, func(Version) bool { return false })
		if (werr == nil) != (gerr == nil) || len(got) != len(want) {
			t.Errorf("%s: DecodeFreshStates = %d states, %v; DecodeStates = %d, %v", name, len(got), gerr, len(want), werr)
		}
	}
	// With nothing held it decodes what DecodeStates decodes.
	all, _ := EncodeStates([]NodeState{held, newer, other})
	want, _ := DecodeStates(all)
	got, err = DecodeFreshStates(all, func(Version) bool { return false })
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("nothing held: DecodeFreshStates = %+v, %v; want %+v", got, err, want)
	}
}

// FuzzDecodeFreshStates checks that, with nothing held, the shortcut
// accepts and returns exactly what DecodeStates does.
func FuzzDecodeFreshStates(f *testing.F) {
	s := sampleState()
	b, _ := EncodeStates([]NodeState{s, s})
	f.Add(b)
	f.Add([]byte{msgStates, wireV1, '[', '{', '"', '\\', '"', '}', ']'})
	f.Add(append([]byte{msgStates, wireV1}, []byte(`[{"name":"a\"}","boot":1,"seq":2},{"name":"b","x":[{}]}]`)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := DecodeStates(b)
		got, gerr := DecodeFreshStates(b, func(Version) bool { return false })
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("DecodeStates err %v, DecodeFreshStates err %v", werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) && (len(want) > 0 || len(got) > 0) {
			t.Fatalf("DecodeStates %+v, DecodeFreshStates %+v", want, got)
		}
	})
}

// staleAgainst is a holder's test of a version against the states it
// holds, as gossip's table answers it: stale unless newer than the state
// held under its name.
func staleAgainst(held ...NodeState) func(Version) bool {
	return func(v Version) bool {
		for i := range held {
			if held[i].Name == string(v.Name) {
				s := NodeState{Boot: v.Boot, Seq: v.Seq}
				return !s.Newer(&held[i])
			}
		}
		return false
	}
}
