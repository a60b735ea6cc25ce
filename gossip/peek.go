package gossip

import (
	"bytes"
	"strconv"
)

// version is the part of a broadcast that says which state it is: whose,
// which boot, which update. Name aliases the message's bytes: peeking
// allocates nothing (a string per copy cost as much as the rest of the
// peek in a profile of 300 agents).
type version struct {
	Name []byte
	Boot int64
	Seq  uint64
}

// headName, headBoot and headSeq are how EncodeState begins a state:
// encoding/json writes a struct's fields in their order, and NodeState
// begins with Name, Boot and Seq. (A message that repeats a key, which
// encoding/json never writes, is read here by its first and by the
// decoder by its last: such a copy can only be dropped, never merged
// wrongly.)
var (
	headName = []byte(`{"name":"`)
	headBoot = []byte(`","boot":`)
	headSeq  = []byte(`,"seq":`)
)

// peekVersion reads a broadcast's version without decoding the state, or
// reports false when the message does not begin as EncodeState begins one
// (an escaped name, another encoder's field order): the caller then
// decodes it whole. A node re-gossips each state it has not seen
// 4·⌈log10(n+1)⌉ times, so an agent receives each change about that many
// times and all but the first are stale: reading the version alone
// spares decoding and validating the other copies.
func peekVersion(b []byte) (version, bool) {
	var v version
	if len(b) < 2 || b[0] != msgState || b[1] != wireV1 {
		return v, false
	}
	rest, ok := bytes.CutPrefix(b[2:], headName)
	if !ok {
		return v, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 1 || end > maxNameLen || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return v, false
	}
	name := rest[:end]
	if rest, ok = bytes.CutPrefix(rest[end:], headBoot); !ok {
		return v, false
	}
	boot, rest, ok := cutNumber(rest)
	if !ok {
		return v, false
	}
	if v.Boot, ok = parseInt(boot); !ok {
		return v, false
	}
	if rest, ok = bytes.CutPrefix(rest, headSeq); !ok {
		return v, false
	}
	seq, _, ok := cutNumber(rest)
	if !ok {
		return v, false
	}
	n, err := strconv.ParseUint(string(seq), 10, 64)
	if err != nil {
		return v, false
	}
	v.Name, v.Seq = name, n
	return v, true
}

// cutNumber splits b after a JSON integer followed by ',' or '}'.
func cutNumber(b []byte) (num, rest []byte, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == start || i >= len(b) || (b[i] != ',' && b[i] != '}') {
		return nil, nil, false
	}
	return b[:i], b[i:], true
}

func parseInt(b []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}
