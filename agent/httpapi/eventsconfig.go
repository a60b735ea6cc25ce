package httpapi

import (
	"fmt"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/events"
)

// EventsConfig bounds the event stream.
type EventsConfig struct {
	// Buffer is how many events the agent keeps for streams that resume
	// (events.DefaultRingSize, 4096).
	Buffer int
	// Keepalive is how often an idle stream gets a comment line
	// (api.KeepaliveInterval, 15 s).
	Keepalive time.Duration
	// NodeUpdateEvery is how often, at most, a node's changed load and
	// inventory are told as an "updated" event (5 s); changes of status
	// and drain are told at once.
	NodeUpdateEvery time.Duration
}

// DefaultEventsConfig is the production stream.
func DefaultEventsConfig() EventsConfig {
	return EventsConfig{Buffer: events.DefaultRingSize, Keepalive: api.KeepaliveInterval, NodeUpdateEvery: 5 * time.Second}
}

// Validate refuses negative bounds; zero takes the default.
func (c EventsConfig) Validate() error {
	if c.Buffer < 0 || c.Keepalive < 0 || c.NodeUpdateEvery < 0 {
		return fmt.Errorf("events: buffer %d, keepalive %v and node update interval %v must not be negative", c.Buffer, c.Keepalive, c.NodeUpdateEvery)
	}
	return nil
}

// orDefault fills zero fields with DefaultEventsConfig's.
func (c EventsConfig) orDefault() EventsConfig {
	d := DefaultEventsConfig()
	if c.Buffer == 0 {
		c.Buffer = d.Buffer
	}
	if c.Keepalive == 0 {
		c.Keepalive = d.Keepalive
	}
	if c.NodeUpdateEvery == 0 {
		c.NodeUpdateEvery = d.NodeUpdateEvery
	}
	return c
}
