package gossip

import (
	"encoding/binary"
	"fmt"
)

// An inbound memberlist stream from a member of an encrypted cluster opens
// with one frame header: memberlist's "encrypted message" type byte and the
// big-endian length of the ciphertext that follows. memberlist reads and
// buffers that many bytes (up to 20 MiB) before it can tell whether the
// sender holds the key, so the header is the one thing a stranger controls
// that the guard can check before any buffering happens.
const (
	// streamHeaderLen is the type byte and the uint32 length.
	streamHeaderLen = 5
	// encryptedStreamType is memberlist's encryptMsg message type (v0.6.0,
	// net.go). A memberlist upgrade that renumbered it would make every
	// member's stream fail here; TestGuardAdmitsMembers would catch that.
	encryptedStreamType = 10
)

// parseStreamHeader checks an inbound stream's first five bytes and returns
// the ciphertext length they declare. The stream is refused when it is not
// encrypted (memberlist refuses those too once a key is set) or declares
// more than limit bytes.
func parseStreamHeader(h []byte, limit int) (int, error) {
	if len(h) != streamHeaderLen {
		return 0, fmt.Errorf("%w: header of %d bytes, want %d", ErrStreamRefused, len(h), streamHeaderLen)
	}
	if h[0] != encryptedStreamType {
		return 0, fmt.Errorf("%w: message type %d is not an encrypted message", ErrStreamRefused, h[0])
	}
	n := binary.BigEndian.Uint32(h[1:])
	if uint64(n) > uint64(max(limit, 0)) {
		return 0, fmt.Errorf("%w: declares %d bytes, at most %d before authentication", ErrStreamRefused, n, limit)
	}
	return int(n), nil
}

// Bounds of the first message an inbound stream may declare. A push/pull
// carries every member's memberlist entry (name, address, 512-byte metadata
// at most) and shoal's table of node states, which is about what this node
// itself sends: the peers hold the same table. The cap is twice this
// node's last encoded table plus an entry per member, never below
// minStreamMessage (a small cluster, or a node that has not sent its table
// yet) and never above memberlist's own limit.
const (
	minStreamMessage  = 1 << 20
	maxStreamMessage  = 20 << 20
	perMemberOverhead = 1 << 10
)

// streamMessageCap is the largest first message an inbound stream may
// declare, given the size of this node's own encoded table and the number
// of members. A peer whose table really is larger (the other side of a
// healed partition) still exchanges it: this node's own push/pulls to that
// peer read the answer on an outbound stream, which is not capped here.
func streamMessageCap(ownStateBytes, members int) int {
	c := 2*max(ownStateBytes, 0) + max(members, 1)*perMemberOverhead
	return min(max(c, minStreamMessage), maxStreamMessage)
}
