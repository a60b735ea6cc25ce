package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/elastic"
)

// ElasticOptions tune elastic jobs on one agent.
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

// elasticSettings holds the agent's ElasticOptions, which may change at
// run time (SetElasticOptions); its zero value holds the defaults. The
// leader's config, the job node's resize signals, the progress reporter
// and the HTTP API read it.
type elasticSettings struct {
	mu   sync.Mutex
	opts *ElasticOptions
}

// set replaces the options, once they validate.
func (e *elasticSettings) set(o ElasticOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opts = &o
	return nil
}

// get is the options as they are now.
func (e *elasticSettings) get() ElasticOptions {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opts == nil {
		return DefaultElasticOptions()
	}
	return *e.opts
}

// SetElasticOptions replaces the elastic options of this agent (tests shorten the windows).
func (a *Agent) SetElasticOptions(o ElasticOptions) error { return a.elastic.set(o) }
