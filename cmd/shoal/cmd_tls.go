package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/tlsca"
)

// tlsCommand makes certificate files for sites that keep their own CA
// (like `nomad tls`). Without them nothing is needed: the token derives
// the cluster's CA and every agent issues its own certificate.
func tlsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tls",
		Usage: "make CA and certificate files for sites that keep their own PKI",
		Description: `Not needed by default: the cluster token derives the cluster CA and every
agent issues its own short-lived certificate from it. Sites that want files:

Examples:
  shoal tls ca create                            # shoal-ca.pem, shoal-ca-key.pem
  shoal tls cert create --node node1 --ip 10.0.0.1   # node1.pem, node1-key.pem
  shoal agent ... --tls-ca-file shoal-ca.pem --tls-cert-file node1.pem --tls-key-file node1-key.pem
  shoal tls ca export --token-file token > token-ca.pem   # the token's CA certificate (public)`,
		Subcommands: []*cli.Command{
			{
				Name:  "ca",
				Usage: "create a CA, or export the token's derived CA certificate",
				Description: `Examples:
  shoal tls ca create --out-dir /root/shoal-ca
  shoal tls ca export --token-file /etc/shoal/token > token-ca.pem`,
				Subcommands: []*cli.Command{
					{
						Name:  "create",
						Usage: "write a new CA: shoal-ca.pem and shoal-ca-key.pem (keep the key off the nodes)",
						Description: `Examples:
  shoal tls ca create --out-dir /root/shoal-ca --days 3650`,
						Flags: []cli.Flag{
							&cli.IntFlag{Name: "days", Value: 5 * 365, Usage: "validity in `DAYS`"},
							&cli.StringFlag{Name: "out-dir", Value: ".", Usage: "write the files in `DIR`"},
							&cli.StringFlag{Name: "name", Value: "shoal cluster CA", Usage: "the CA's common `NAME`"},
						},
						Action: runTLSCACreate,
					},
					{
						Name:  "export",
						Usage: "print the CA certificate the token derives (public: for --tls-ca-file bundles during a rotation, curl --cacert)",
						Description: `Examples:
  shoal tls ca export --token-file /etc/shoal/token > token-ca.pem
  cat token-ca.pem shoal-ca.pem > bundle.pem      # trust both during a rotation`,
						Flags:  []cli.Flag{&cli.StringFlag{Name: "token-file", EnvVars: []string{"SHOAL_TOKEN_FILE"}, Usage: "the cluster token's `FILE`"}},
						Action: runTLSCAExport,
					},
				},
			},
			{
				Name:  "cert",
				Usage: "issue certificates from a CA's files",
				Description: `Examples:
  shoal tls cert create --node node1 --ip 10.0.0.1`,
				Subcommands: []*cli.Command{
					{
						Name:  "create",
						Usage: "write NODE.pem and NODE-key.pem, signed by the CA, valid as server and client",
						Description: `Examples:
  shoal tls cert create --node node1 --ip 10.0.0.1 --ca shoal-ca.pem --ca-key shoal-ca-key.pem
  shoal tls cert create --node admin-alice --days 30    # a client certificate for an administrator`,
						Flags: []cli.Flag{
							&cli.StringFlag{Name: "node", Usage: "node `NAME` (or any name, for a client such as an administrator's CLI)"},
							&cli.StringSliceFlag{Name: "ip", Usage: "an `IP` the node is reached by; repeatable (127.0.0.1 is always in)"},
							&cli.StringFlag{Name: "ca", Value: "shoal-ca.pem", Usage: "the CA's certificate `FILE`"},
							&cli.StringFlag{Name: "ca-key", Value: "shoal-ca-key.pem", Usage: "the CA's key `FILE`"},
							&cli.IntFlag{Name: "days", Value: 365, Usage: "validity in `DAYS`"},
							&cli.StringFlag{Name: "out-dir", Value: ".", Usage: "write the files in `DIR`"},
						},
						Action: runTLSCertCreate,
					},
				},
			},
		},
	}
}

func runTLSCACreate(c *cli.Context) error {
	if c.Int("days") < 1 {
		return usagef(c, "--days %d must be at least 1", c.Int("days"))
	}
	ca, err := tlsca.NewCA(c.String("name"), time.Now(), time.Duration(c.Int("days"))*24*time.Hour)
	if err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	return writePair(c, filepath.Join(c.String("out-dir"), "shoal-ca"), ca.Cert.Raw, ca.Key)
}

func runTLSCAExport(c *cli.Context) error {
	f := c.String("token-file")
	if f == "" {
		return usagef(c, "pass --token-file FILE (or set SHOAL_TOKEN_FILE)")
	}
	tok, err := agent.ReadTokenFile(f)
	if err != nil {
		return cli.Exit(err.Error(), exitUsage)
	}
	ca, err := tlsca.DeriveCA(tok)
	if err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	_, err = c.App.Writer.Write(tlsca.CertPEM(ca.Cert))
	return err
}

func runTLSCertCreate(c *cli.Context) error {
	name := c.String("node")
	if name == "" {
		return usagef(c, "--node NAME is required")
	}
	if c.Int("days") < 1 {
		return usagef(c, "--days %d must be at least 1", c.Int("days"))
	}
	var ips []net.IP
	for _, s := range c.StringSlice("ip") {
		ip := net.ParseIP(s)
		if ip == nil {
			return usagef(c, "--ip %q is not an IP address", s)
		}
		ips = append(ips, ip)
	}
	ca, err := tlsca.LoadCA(c.String("ca"), c.String("ca-key"), time.Now())
	if err != nil {
		return cli.Exit(err.Error(), exitUsage)
	}
	req := tlsca.AgentRequest(name, "", time.Duration(c.Int("days"))*24*time.Hour)
	req.IPs = append(req.IPs, ips...)
	leaf, err := ca.Issue(req, time.Now())
	if err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	return writePair(c, filepath.Join(c.String("out-dir"), name), leaf.Leaf.Raw, leaf.PrivateKey)
}

// writePair writes BASE.pem and BASE-key.pem (0600), refusing to overwrite.
func writePair(c *cli.Context, base string, der []byte, key any) error {
	certFile, keyFile := base+".pem", base+"-key.pem"
	keyPEM, err := tlsca.KeyPEM(key)
	if err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	for _, f := range []string{certFile, keyFile} {
		if _, err := os.Stat(f); err == nil {
			return cli.Exit(fmt.Sprintf("%s exists: move it away or pass --out-dir", f), exitUsage)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return cli.Exit(err.Error(), exitFailure)
		}
	}
	// Created here, never through a link or over a file someone else put
	// in the directory since the check above: the key mints certificates.
	if err := writeNew(keyFile, keyPEM, 0o600); err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	if err := writeNew(certFile, tlsca.DERPEM(der), 0o644); err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	fmt.Fprintf(c.App.Writer, "wrote %s and %s\n", certFile, keyFile)
	return nil
}

// writeNew creates path (O_EXCL, not following a symlink) with mode and
// writes b to it.
func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return fmt.Errorf("create %s: %w (move it away or pass --out-dir)", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
