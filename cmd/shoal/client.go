package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
)

// clientFlags are the flags of every command that talks to an agent; each
// has an environment variable that works wherever the flag does.
func clientFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "addr", Value: "http://127.0.0.1:7948", EnvVars: []string{"SHOAL_ADDR"},
			Usage: "`URL` of the agent's HTTP API (needs the token), or unix://PATH of its local socket (no token: you act as yourself); several URLs, comma-separated, are tried in order"},
		&cli.StringFlag{Name: "token-file", EnvVars: []string{"SHOAL_TOKEN_FILE"}, Usage: "read the cluster token from `FILE`"},
		&cli.StringFlag{Name: "token", EnvVars: []string{"SHOAL_TOKEN"}, Usage: "the cluster token itself (prefer --token-file: argv is visible to others)"},
	}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON instead of a table"}
}

func newClient(c *cli.Context) (*api.Client, error) {
	listed := strings.Split(c.String("addr"), ",")
	for i := range listed {
		listed[i] = strings.TrimSpace(listed[i])
	}
	addr := listed[0]
	if len(listed) > 1 {
		for _, a := range listed {
			if !strings.HasPrefix(a, "http://") && !strings.HasPrefix(a, "https://") {
				return nil, cli.Exit(fmt.Sprintf("--addr %q: a list holds URLs such as http://node1:7948,http://node2:7948 (a unix:// socket stands alone)", c.String("addr")), exitUsage)
			}
		}
	}
	if path, ok := strings.CutPrefix(addr, api.SocketScheme); ok {
		// The kernel tells the agent who we are: no token to read (users
		// usually cannot read it anyway).
		if path == "" {
			return nil, cli.Exit(fmt.Sprintf("--addr %q names no socket: use unix:///PATH, e.g. unix:///var/lib/shoal/shoal.sock", addr), exitUsage)
		}
		return api.NewClient(addr, ""), nil
	}
	tok := c.String("token")
	if f := c.String("token-file"); f != "" {
		t, err := agent.ReadTokenFile(f)
		if err != nil {
			return nil, cli.Exit(err.Error(), exitUsage)
		}
		tok = t
	}
	if tok == "" {
		return nil, cli.Exit("no cluster token: pass --token-file FILE or set SHOAL_TOKEN_FILE or SHOAL_TOKEN, or use the local agent's socket with --addr unix://DATA-DIR/shoal.sock", exitUsage)
	}
	if !strings.HasPrefix(addr, "http://") && !strings.HasPrefix(addr, "https://") {
		return nil, cli.Exit(fmt.Sprintf("--addr %q must be a URL such as http://127.0.0.1:7948 or unix:///var/lib/shoal/shoal.sock", addr), exitUsage)
	}
	cl := api.NewClient(addr, tok)
	withFallbacks(cl, listed)
	c.App.Metadata[metaClient] = cl
	c.App.Metadata[metaPrimary] = addr
	return cl, nil
}

// Keys of App.Metadata: the client a command used, for run() to refresh
// the member cache after the command succeeded.
const (
	metaClient  = "client"
	metaPrimary = "primary"
)

// apiError turns a client error into an exit code with one clear line.
func apiError(err error) error {
	var se *api.StatusError
	switch {
	case errors.Is(err, api.ErrUnauthorized):
		return cli.Exit(err.Error(), exitFailure)
	case errors.Is(err, api.ErrNoAgent):
		return cli.Exit(err.Error(), exitNoLeader)
	case errors.As(err, &se) && se.Code == 503:
		return cli.Exit(se.Msg, exitNoLeader)
	case errors.As(err, &se) && se.Code/100 == 4:
		return cli.Exit(se.Msg, exitUsage)
	}
	return cli.Exit(err.Error(), exitFailure)
}

func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
