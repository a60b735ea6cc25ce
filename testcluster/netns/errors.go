package netns

import "errors"

var (
	// ErrInvalidTopology wraps every problem found by [Topology.Validate].
	ErrInvalidTopology = errors.New("invalid topology")
	// ErrUnavailable is returned by [Up] when the host cannot run a testbed
	// (not root, no iproute2, namespaces not permitted).
	ErrUnavailable = errors.New("netns testbed unavailable")
	// ErrUnknownNode is returned for a node name the topology does not hold.
	ErrUnknownNode = errors.New("unknown node")
	// ErrClosed is returned by operations on a closed testbed.
	ErrClosed = errors.New("testbed closed")
)
