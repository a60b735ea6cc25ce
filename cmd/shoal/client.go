package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
)

// clientFlags are the flags of every command that talks to an agent; each
// has an environment variable that works wherever the flag does.
func clientFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "addr", Value: "https://127.0.0.1:7948", EnvVars: []string{"SHOAL_ADDR"},
			Usage: "`URL` of the agent's HTTPS API (needs the token or a certificate), or unix://PATH of its local socket (no token: you act as yourself); several URLs, comma-separated, are tried in order"},
		&cli.StringFlag{Name: "token-file", EnvVars: []string{"SHOAL_TOKEN_FILE"}, Usage: "read the cluster token from `FILE`"},
		&cli.StringFlag{Name: "token", EnvVars: []string{"SHOAL_TOKEN"}, Usage: "the cluster token itself (prefer --token-file: argv is visible to others)"},
	}, tlsFlags()...)
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON instead of a table"}
}

func newClient(c *cli.Context) (*api.Client, error) {
	if !c.IsSet("addr") && !hasCredentials(c) {
		// A user on a node with the package installed: the local agent's
		// socket, with nothing to set up.
		if sock, ok := localSocket(localSockets); ok {
			return api.NewClient(api.SocketScheme+sock, ""), nil
		}
	}
	listed := strings.Split(c.String("addr"), ",")
	for i := range listed {
		listed[i] = strings.TrimSpace(listed[i])
	}
	addr := listed[0]
	if len(listed) > 1 {
		for _, a := range listed {
			if rest, ok := strings.CutPrefix(a, "http://"); ok {
				return nil, cli.Exit(fmt.Sprintf("--addr %q is plain HTTP, which the agent does not speak: use https://%s", a, rest), exitUsage)
			}
			if !strings.HasPrefix(a, "https://") {
				return nil, cli.Exit(fmt.Sprintf("--addr %q: a list holds URLs such as https://node1:7948,https://node2:7948 (a unix:// socket stands alone)", c.String("addr")), exitUsage)
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
	if rest, ok := strings.CutPrefix(addr, "http://"); ok {
		return nil, cli.Exit(fmt.Sprintf("--addr %q is plain HTTP, which the agent does not speak: use https://%s", addr, rest), exitUsage)
	}
	if !strings.HasPrefix(addr, "https://") {
		return nil, cli.Exit(fmt.Sprintf("--addr %q must be a URL such as https://127.0.0.1:7948 or unix:///var/lib/shoal/shoal.sock", addr), exitUsage)
	}
	tok := c.String("token")
	if f := c.String("token-file"); f != "" {
		t, err := agent.ReadTokenFile(f)
		if err != nil {
			return nil, cli.Exit(err.Error(), exitUsage)
		}
		tok = t
	}
	if tok == "" && c.String("cert-file") == "" {
		return nil, cli.Exit("no cluster token and no local agent at "+strings.Join(localSockets, " or ")+": pass --token-file FILE or set SHOAL_TOKEN_FILE or SHOAL_TOKEN (or --cert-file with --ca-file), or give the agent's socket with --addr unix://PATH", exitUsage)
	}
	tc, err := clientTLS(tok, c.String("ca-file"), c.String("cert-file"), c.String("key-file"), time.Now())
	if err != nil {
		return nil, cli.Exit(err.Error(), exitUsage)
	}
	// A client certificate authenticates: the token stays here, never a
	// bearer header, whatever server the address names.
	cl := api.NewTLSClient(addr, "", tc)
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
	var ve *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ve):
		return cli.Exit(fmt.Sprintf("the agent's certificate is not signed by this cluster's CA (%v): "+
			"is the token (or --ca-file) this cluster's, and the address one of its agents?", ve.Err), exitFailure)
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
