package slurm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// Options configure Up.
type Options struct {
	// Dir holds the munge key and socket, slurm.conf, state, spool and
	// logs. Required; the caller removes it.
	Dir string
	// Controller is the node slurmctld runs on; default the first node.
	Controller string
	// CPUs is every node's CPUs= unless PerNodeCPUs names it; default 1.
	CPUs        int
	PerNodeCPUs map[string]int
	// Config is the first configuration slurmctld starts with.
	Config Config
	// StartTimeout bounds each wait for the daemons; default 60 s.
	StartTimeout time.Duration
	Logger       *slog.Logger
}

// Cluster is a running Slurm cluster on a testbed.
type Cluster struct {
	tb    *netns.Testbed
	opts  Options
	log   *slog.Logger
	nodes []Node // controller first
	conf  string // slurm.conf's path

	munged *netns.Process
	ctld   *netns.Process
	slurmd []*netns.Process
}

// Tools are the Debian binaries the cluster needs.
var Tools = []string{"munged", "slurmctld", "slurmd", "salloc", "sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo"}

// Available reports whether the Slurm and munge binaries are installed,
// and if not, which is missing.
func Available() (bool, string) {
	for _, t := range Tools {
		if _, err := exec.LookPath(t); err != nil {
			return false, t + " not found (install Debian's slurm-wlm and munge)"
		}
	}
	return true, ""
}

// Up starts munged, slurmctld and one slurmd per testbed node, and waits
// until every node is idle in sinfo.
func Up(ctx context.Context, tb *netns.Testbed, opts Options) (c *Cluster, err error) {
	if opts.Dir == "" {
		return nil, errors.New("slurm: Options.Dir is required")
	}
	if ok, why := Available(); !ok {
		return nil, fmt.Errorf("slurm: %s", why)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c = &Cluster{tb: tb, opts: opts, log: opts.Logger, conf: filepath.Join(opts.Dir, "slurm.conf")}
	for _, n := range tb.Nodes() {
		cpus := max(opts.CPUs, 1)
		if v, ok := opts.PerNodeCPUs[n.Name]; ok {
			cpus = v
		}
		nd := Node{Name: n.Name, Addr: n.IP, CPUs: cpus}
		if n.Name == opts.Controller {
			c.nodes = append([]Node{nd}, c.nodes...)
			continue
		}
		c.nodes = append(c.nodes, nd)
	}
	if len(c.nodes) == 0 {
		return nil, errors.New("slurm: the testbed has no nodes")
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close())
			c = nil
		}
	}()
	for _, d := range []string{"munge", "ctld", "spool"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, d), 0o755); err != nil {
			return c, fmt.Errorf("slurm: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(opts.Dir, "plugstack.conf"), nil, 0o644); err != nil {
		return c, fmt.Errorf("slurm: %w", err)
	}
	if err := c.startMunge(ctx); err != nil {
		return c, err
	}
	if err := c.writeConf(opts.Config); err != nil {
		return c, err
	}
	if err := c.startCtld(ctx); err != nil {
		return c, err
	}
	for _, n := range c.nodes {
		if err := os.MkdirAll(filepath.Join(opts.Dir, "spool", n.Name), 0o755); err != nil {
			return c, fmt.Errorf("slurm: %w", err)
		}
		p, err := tb.Start(ctx, n.Name, []string{"slurmd", "-D", "-N", n.Name, "-f", c.conf}, c.env())
		if err != nil {
			return c, fmt.Errorf("slurm: start slurmd on %s: %w", n.Name, err)
		}
		c.slurmd = append(c.slurmd, p)
	}
	return c, c.waitIdle(ctx)
}

// startMunge writes a fresh key and starts one munged for every node: its
// socket is a path in Dir, which every node's mount namespace sees.
func (c *Cluster) startMunge(ctx context.Context) error {
	dir := filepath.Join(c.opts.Dir, "munge")
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("slurm: munge key: %w", err)
	}
	keyFile := filepath.Join(dir, "munge.key")
	if err := os.WriteFile(keyFile, key, 0o400); err != nil {
		return fmt.Errorf("slurm: munge key: %w", err)
	}
	sock := filepath.Join(dir, "munge.socket")
	// --force: the key and socket live under a temporary directory whose
	// parents (/tmp) munged would otherwise refuse as writable by others.
	p, err := c.tb.Start(ctx, c.nodes[0].Name, []string{"munged", "--foreground", "--force",
		"--socket=" + sock, "--key-file=" + keyFile, "--pid-file=" + filepath.Join(dir, "munged.pid"),
		"--log-file=" + filepath.Join(dir, "munged.log"), "--seed-file=" + filepath.Join(dir, "munged.seed")}, nil)
	if err != nil {
		return fmt.Errorf("slurm: start munged: %w", err)
	}
	c.munged = p
	return c.waitFor(ctx, "munged's socket", func(context.Context) error {
		select {
		case <-p.Done():
			out, _ := p.Output()
			return fmt.Errorf("munged exited: %w: %s", errPermanent, out)
		default:
		}
		_, err := os.Stat(sock)
		return err
	})
}

// errPermanent marks an error waitFor does not wait out.
var errPermanent = errors.New("will not recover")

func (c *Cluster) writeConf(cfg Config) error {
	if err := os.WriteFile(c.conf, []byte(slurmConf(c.opts.Dir, c.nodes, cfg)), 0o644); err != nil {
		return fmt.Errorf("slurm: write slurm.conf: %w", err)
	}
	topo := filepath.Join(c.opts.Dir, "topology.conf")
	if cfg.Topology == "" {
		if err := os.Remove(topo); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("slurm: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(topo, []byte(cfg.Topology), 0o644); err != nil {
		return fmt.Errorf("slurm: write topology.conf: %w", err)
	}
	return nil
}

// startCtld starts slurmctld with a clean state (-c) and waits until it
// answers scontrol ping.
func (c *Cluster) startCtld(ctx context.Context) error {
	p, err := c.tb.Start(ctx, c.nodes[0].Name, []string{"slurmctld", "-D", "-c", "-i", "-f", c.conf}, c.env())
	if err != nil {
		return fmt.Errorf("slurm: start slurmctld: %w", err)
	}
	c.ctld = p
	return c.waitFor(ctx, "slurmctld to answer", func(ctx context.Context) error {
		select {
		case <-p.Done():
			return fmt.Errorf("slurmctld exited: %w (log %s)", errPermanent, filepath.Join(c.opts.Dir, "slurmctld.log"))
		default:
		}
		out, err := c.Client(ctx, "scontrol", "ping")
		if err == nil && !strings.Contains(out, "is UP") {
			err = fmt.Errorf("scontrol ping: %s", strings.TrimSpace(out))
		}
		return err
	})
}

// Configure restarts slurmctld with cfg and waits until every node is
// idle again. Jobs are lost: call it between runs.
func (c *Cluster) Configure(ctx context.Context, cfg Config) error {
	if err := stop(c.ctld, 10*time.Second); err != nil {
		return fmt.Errorf("slurm: stop slurmctld: %w", err)
	}
	c.ctld = nil
	if err := c.writeConf(cfg); err != nil {
		return err
	}
	if err := c.startCtld(ctx); err != nil {
		return err
	}
	return c.waitIdle(ctx)
}

// waitIdle waits until sinfo lists every node idle.
func (c *Cluster) waitIdle(ctx context.Context) error {
	return c.waitFor(ctx, "every slurmd registered and idle", func(ctx context.Context) error {
		out, err := c.Client(ctx, "sinfo", "-h", "-N", "-o", "%N %t")
		if err != nil {
			return err
		}
		idle := 0
		var other []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[1] == "idle" {
				idle++
			} else if l != "" {
				other = append(other, l)
			}
		}
		if idle != len(c.nodes) {
			return fmt.Errorf("%d of %d nodes idle; others: %s", idle, len(c.nodes), strings.Join(other, ", "))
		}
		return nil
	})
}

// Client runs a Slurm client command (scontrol, sinfo, srun, ...) on the
// controller's node against this cluster's slurm.conf and returns its
// stdout.
func (c *Cluster) Client(ctx context.Context, argv ...string) (string, error) {
	return c.ClientOn(ctx, c.nodes[0].Name, argv...)
}

// ClientOn is Client on node.
func (c *Cluster) ClientOn(ctx context.Context, node string, argv ...string) (string, error) {
	cmd := c.Command(ctx, node, argv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("slurm: %s on %s: %w: %s", strings.Join(argv, " "), node, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Command is the command that runs argv on node with this cluster's
// environment (SLURM_CONF), for callers that time it or read stderr.
func (c *Cluster) Command(ctx context.Context, node string, argv ...string) *exec.Cmd {
	cmd := c.tb.Command(ctx, node, argv...)
	cmd.Env = append(cmd.Env, c.env()...)
	return cmd
}

// Controller is the node slurmctld runs on.
func (c *Cluster) Controller() string { return c.nodes[0].Name }

// Conf is slurm.conf's path: SLURM_CONF for commands run elsewhere.
func (c *Cluster) Conf() string { return c.conf }

func (c *Cluster) env() []string { return []string{"SLURM_CONF=" + c.conf} }

var granted = regexp.MustCompile(`Granted job allocation (\d+)`)

// Alloc asks Slurm for nodes nodes with ppn tasks each (salloc --no-shell
// -N nodes -n nodes*ppn --ntasks-per-node ppn) and returns one host per
// task in Slurm's order and the job ID holding them; Release frees them.
func (c *Cluster) Alloc(ctx context.Context, nodes, ppn int) ([]string, int, error) {
	cmd := c.Command(ctx, c.nodes[0].Name, "salloc", "--no-shell", "-N", strconv.Itoa(nodes), "-n", strconv.Itoa(nodes*ppn),
		"--ntasks-per-node", strconv.Itoa(ppn), "-J", "placement", "--immediate=60")
	out, err := cmd.CombinedOutput()
	m := granted.FindSubmatch(out)
	if err != nil || m == nil {
		return nil, 0, fmt.Errorf("slurm: salloc -N %d: %v: %s", nodes, err, strings.TrimSpace(string(out)))
	}
	id, _ := strconv.Atoi(string(m[1]))
	list, err := c.Client(ctx, "squeue", "-h", "-j", strconv.Itoa(id), "-o", "%N")
	if err != nil {
		return nil, id, errors.Join(err, c.Release(ctx, id))
	}
	names, err := c.Hostnames(ctx, strings.TrimSpace(list))
	if err != nil {
		return nil, id, errors.Join(err, c.Release(ctx, id))
	}
	var hosts []string
	for _, n := range names {
		for range ppn {
			hosts = append(hosts, n)
		}
	}
	return hosts, id, nil
}

// Hostnames expands a Slurm hostlist (n[01-03]) with scontrol.
func (c *Cluster) Hostnames(ctx context.Context, list string) ([]string, error) {
	out, err := c.Client(ctx, "scontrol", "show", "hostnames", list)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// Release cancels job id and waits until it has left the queue (not even
// completing), so the next allocation sees its nodes idle.
func (c *Cluster) Release(ctx context.Context, id int) error {
	if _, err := c.Client(ctx, "scancel", strconv.Itoa(id)); err != nil {
		return err
	}
	return c.WaitGone(ctx, id)
}

// WaitGone waits until squeue no longer lists job id (every task of an
// array) as pending, running or completing.
func (c *Cluster) WaitGone(ctx context.Context, id int) error {
	return c.waitFor(ctx, fmt.Sprintf("job %d to leave the queue", id), func(ctx context.Context) error {
		out, err := c.Client(ctx, "squeue", "-h", "-j", strconv.Itoa(id), "-o", "%T")
		if err != nil {
			// squeue -j of a job purged from slurmctld's memory fails.
			if strings.Contains(err.Error(), "Invalid job id") {
				return nil
			}
			return err
		}
		if s := strings.TrimSpace(out); s != "" {
			return fmt.Errorf("still %s", strings.Join(strings.Fields(s), ","))
		}
		return nil
	})
}

// waitFor polls cond every 200 ms until it returns nil, it wraps
// errPermanent, or StartTimeout passes.
func (c *Cluster) waitFor(ctx context.Context, what string, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		if errors.Is(err, errPermanent) {
			return fmt.Errorf("slurm: waiting for %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slurm: waiting for %s: %w (last: %w)", what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// Close stops slurmd, slurmctld and munged, in that order.
func (c *Cluster) Close() error {
	var errs []error
	for _, p := range c.slurmd {
		errs = append(errs, stop(p, 10*time.Second))
	}
	c.slurmd = nil
	errs = append(errs, stop(c.ctld, 10*time.Second), stop(c.munged, 5*time.Second))
	c.ctld, c.munged = nil, nil
	return errors.Join(errs...)
}

// stop sends SIGTERM to p's process group, then SIGKILL after grace, and
// waits for it. A nil or exited process is no error.
func stop(p *netns.Process, grace time.Duration) error {
	if p == nil {
		return nil
	}
	select {
	case <-p.Done():
		return nil
	default:
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.Done():
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(-p.Pid(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %d: %w", p.Pid(), err)
	}
	<-p.Done()
	return nil
}
