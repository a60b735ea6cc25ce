package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/elastic"
)

// ElasticOptions tune elastic jobs (issue 8) on one agent.
type ElasticOptions struct {
	// Decision is the decision layer's configuration (elastic.DefaultConfig()).
	Decision elastic.Config
	// ProgressEvery is the least time between two progress reports of one attempt that this
	// agent commits to raft; reports in between are answered but not committed. Default 1s.
	ProgressEvery time.Duration
	// SignalEvery is how often SIGUSR1 is sent again to an attempt asked to resize that has not
	// exited yet (a process may not have installed its handler the first time). Default 5s.
	SignalEvery time.Duration
	// NoProgressAfter is how long an attempt may run without reporting progress before
	// `shoal job` says it runs as a fixed-size job. Default 30s.
	NoProgressAfter time.Duration
}

// DefaultElasticOptions returns the defaults documented on each field.
func DefaultElasticOptions() ElasticOptions {
	return ElasticOptions{Decision: elastic.DefaultConfig(), ProgressEvery: time.Second,
		SignalEvery: 5 * time.Second, NoProgressAfter: 30 * time.Second}
}

// Validate names the first field out of bounds.
func (o ElasticOptions) Validate() error {
	if err := o.Decision.Validate(); err != nil {
		return fmt.Errorf("elastic decision: %w", err)
	}
	if o.ProgressEvery < 0 || o.SignalEvery <= 0 || o.NoProgressAfter <= 0 {
		return fmt.Errorf("elastic options: ProgressEvery must be >= 0, SignalEvery and NoProgressAfter > 0 (got %v, %v, %v)",
			o.ProgressEvery, o.SignalEvery, o.NoProgressAfter)
	}
	return nil
}

// elasticState is the node-local bookkeeping of elastic jobs.
type elasticState struct {
	mu       sync.Mutex
	opts     *ElasticOptions
	reported map[jobKey]progressMark // the last progress committed per attempt
}

type progressMark struct {
	at   time.Time
	iter int64
}

// SetElasticOptions replaces the elastic options of this agent (tests shorten the windows).
func (a *Agent) SetElasticOptions(o ElasticOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	a.jobs.el.mu.Lock()
	defer a.jobs.el.mu.Unlock()
	a.jobs.el.opts = &o
	return nil
}

func (a *Agent) elasticOptions() ElasticOptions {
	a.jobs.el.mu.Lock()
	defer a.jobs.el.mu.Unlock()
	if a.jobs.el.opts == nil {
		return DefaultElasticOptions()
	}
	return *a.jobs.el.opts
}
