package nodestate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Version is the part of a broadcast that says which state it is: whose,
// which boot, which update. Name aliases the message's bytes: peeking
// allocates nothing (a string per copy cost as much as the rest of the
// peek in a profile of 300 agents).
type Version struct {
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

// PeekVersion reads a broadcast's version without decoding the state, or
// reports false when the message does not begin as EncodeState begins one
// (an escaped name, another encoder's field order): the caller then
// decodes it whole. A node re-gossips each state it has not seen
// 4·⌈log10(n+1)⌉ times, so an agent receives each change about that many
// times and all but the first are stale: reading the version alone
// spares decoding and validating the other copies.
func PeekVersion(b []byte) (Version, bool) {
	if len(b) < 2 || b[0] != msgState || b[1] != wireV1 {
		return Version{}, false
	}
	return peekBody(b[2:])
}

// peekBody is PeekVersion on a state's JSON object alone: a broadcast's
// body, or one element of a push/pull's array.
func peekBody(b []byte) (Version, bool) {
	var v Version
	rest, ok := bytes.CutPrefix(b, headName)
	if !ok {
		return v, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 1 || end > MaxNameLen || bytes.IndexByte(rest[:end], '\\') >= 0 {
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

// DecodeFreshStates decodes a push/pull payload as DecodeStates does, but
// decodes only the states that stale does not recognise by their version
// (peekBody): the others are copies of states held, which Merge would
// refuse. A push/pull carries every live node's state and, in a quiet
// cluster, every one of them is held already: at 1,000 nodes that is
// 819 KiB of JSON decoded, validated and dropped at every exchange, on both
// sides. The payload must still be valid JSON and an array of at most
// maxStates objects, and every state decoded must validate, or the whole
// payload is rejected (a peer that sends garbage is not trusted for the
// rest); a stale state is not validated, as a stale broadcast is not.
// stale is called for each state in turn, in one call of this function:
// the caller holds whatever lock stale needs.
func DecodeFreshStates(b []byte, stale func(Version) bool) ([]NodeState, error) {
	if err := checkHeader(b, msgStates); err != nil {
		return nil, err
	}
	body := b[2:]
	if !json.Valid(body) {
		// The decoder names what is wrong.
		return DecodeStates(b)
	}
	elems, ok := splitObjects(body)
	if !ok {
		// Not an array of objects (null, or another encoder's output):
		// the decoder takes it or names what is wrong.
		return DecodeStates(b)
	}
	if len(elems) > maxStates {
		return nil, fmt.Errorf("%w: %d states, at most %d", ErrMalformed, len(elems), maxStates)
	}
	var out []NodeState
	for i, e := range elems {
		if v, ok := peekBody(e); ok && stale(v) {
			continue
		}
		var s NodeState
		if err := json.Unmarshal(e, &s); err != nil {
			return nil, fmt.Errorf("%w: state %d: %w", ErrMalformed, i, err)
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%w: state %d: %w", ErrMalformed, i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// splitObjects returns the elements of a JSON array of objects, each
// aliasing b, or false when b is not one. b must be valid JSON
// (json.Valid), so that only strings, their escapes and nesting need
// tracking.
func splitObjects(b []byte) ([][]byte, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var out [][]byte
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, true
	}
	for i < len(b) {
		if b[i] != '{' {
			return nil, false
		}
		start, depth, inStr := i, 0, false
	obj:
		for ; i < len(b); i++ {
			c := b[i]
			switch {
			case inStr && c == '\\':
				i++ // the escaped byte cannot end the string
			case c == '"':
				inStr = !inStr
			case inStr:
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					i++
					break obj
				}
			}
		}
		out = append(out, b[start:i])
		i = skipSpace(b, i)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == ']' {
			return out, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
