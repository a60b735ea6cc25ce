package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent"
)

func keygenCommand() *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "print a new cluster token",
		Description: `The token derives the cluster CA (TLS for the API, raft and probes: every agent
issues its own certificate from it), authenticates API calls inside TLS and, through a
derived key, encrypts gossip. Every agent of a cluster reads the same token; no other
file is needed ('shoal tls' is for sites that keep their own PKI).

Example:
  shoal keygen > token && chmod 600 token`,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "keygen takes no arguments")
			}
			tok, err := agent.NewToken()
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			fmt.Fprintln(c.App.Writer, tok)
			return nil
		},
	}
}
