package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// The CLI reaches another agent when its own is down: --addr / SHOAL_ADDR
// may list several (comma-separated, tried in order), and after a call that
// succeeded the CLI keeps the members' API addresses in a cache file, tried
// after the listed ones. Only with a token: the other agents are reached
// over TCP, where the local socket's "you are who the kernel says" does not
// hold.

// cacheMaxAge is how long a cached member list is used without a refresh.
const cacheMaxAge = time.Minute

// agentCache is the cache file: the members of the cluster reached at Addr.
type agentCache struct {
	Addr   string    `json:"addr"` // the first --addr the list was learnt through
	At     time.Time `json:"at"`
	Agents []string  `json:"agents"` // base URLs
}

// cachePath is $SHOAL_AGENTS_CACHE, or agents.json in the user's cache
// directory (~/.cache/shoal/), or "" when there is none.
func cachePath() string {
	if p := os.Getenv("SHOAL_AGENTS_CACHE"); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "shoal", "agents.json")
}

func readCache(primary string) agentCache {
	var ac agentCache
	p := cachePath()
	if p == "" {
		return ac
	}
	b, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(b, &ac) != nil || ac.Addr != primary {
		return agentCache{}
	}
	return ac
}

// withFallbacks sets the client's fallbacks: the listed addresses after
// the first, then the cached members not listed already.
func withFallbacks(cl *api.Client, listed []string) {
	seen := map[string]bool{cl.Base: true}
	for _, a := range append(slices.Clone(listed[1:]), readCache(listed[0]).Agents...) {
		a = strings.TrimRight(a, "/")
		if !seen[a] {
			seen[a] = true
			cl.Fallbacks = append(cl.Fallbacks, a)
		}
	}
}

// refreshCache asks the agent that answered for its members and writes
// their API addresses, when the cache is missing or older than
// cacheMaxAge. Best effort: a CLI that cannot write its cache still worked.
func refreshCache(ctx context.Context, cl *api.Client, primary string, now time.Time) {
	p := cachePath()
	if p == "" || cl.Socket != "" {
		return
	}
	if ac := readCache(primary); now.Sub(ac.At) < cacheMaxAge && len(ac.Agents) > 0 {
		return
	}
	u, err := url.Parse(cl.Base)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ms, err := cl.Members(ctx)
	if err != nil {
		return
	}
	ac := agentCache{Addr: primary, At: now.UTC()}
	for _, m := range ms {
		if m.API != "" && m.Status == "alive" {
			ac.Agents = append(ac.Agents, fmt.Sprintf("%s://%s", u.Scheme, m.API))
		}
	}
	slices.Sort(ac.Agents)
	b, err := json.Marshal(ac)
	if err != nil || os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, p)
	}
}
