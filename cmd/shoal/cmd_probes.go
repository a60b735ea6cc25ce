package main

import "github.com/urfave/cli/v2"

// probeCommands are `shoal net`, `shoal probes` and `shoal probe KIND`
// (issue 5).
func probeCommands() []*cli.Command { return nil }
