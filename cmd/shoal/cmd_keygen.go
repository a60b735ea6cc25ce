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
		Description: `The token authenticates every API call and raft connection and, through a
derived key, encrypts gossip. Every agent of a cluster reads the same token.

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
