package netns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Sweep removes everything left by testbeds whose prefix begins with prefix:
// processes in their namespaces or carrying [MarkerEnv], the namespaces
// themselves (and with them their veths and bridges), their /etc/netns
// directories, owner files and temporary log directories. prefix must begin
// with [Family]; Sweep(Family) removes every testbed on the machine, live or
// not (use [SweepStale] to spare the live ones).
func Sweep(prefix string) error {
	if !strings.HasPrefix(prefix, Family) {
		return fmt.Errorf("sweep %q: prefix must begin with %q", prefix, Family)
	}
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	namespaces := listPrefixed(netnsDir, prefix)
	var errs []error
	if err := killStrays(ctx, prefix, namespaces); err != nil {
		errs = append(errs, err)
	}
	var nsFiles []string
	for _, name := range listPrefixed(nsFileDir, prefix) {
		nsFiles = append(nsFiles, filepath.Join(nsFileDir, name))
	}
	if err := removeNSFiles(nsFiles); err != nil {
		errs = append(errs, err)
	}
	for _, ns := range namespaces {
		if _, err := run(ctx, "ip", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	links, err := hostLinks(ctx, prefix)
	errs = append(errs, err)
	for _, l := range links {
		if _, err := run(ctx, "ip", "link", "del", l); err != nil {
			errs = append(errs, err)
		}
	}
	for _, dir := range []string{etcNetnsDir, ownerDir} {
		for _, name := range listPrefixed(dir, prefix) {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, name)))
		}
	}
	logDirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*-logs-*"))
	for _, dir := range logDirs {
		errs = append(errs, os.RemoveAll(dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sweep %s: %w", prefix, err)
	}
	return nil
}

// SweepStale sweeps every testbed whose owning process is no longer running
// (a killed or crashed test run); testbeds of live processes are left alone.
func SweepStale(ctx context.Context, log *slog.Logger) error {
	if log == nil {
		log = discardLogger()
	}
	seen := map[string]bool{}
	for _, dir := range []string{netnsDir, etcNetnsDir, ownerDir, nsFileDir} {
		for _, name := range listPrefixed(dir, Family) {
			if _, ok := instanceIndex(name); ok {
				seen[name[:len(Family)+2]] = true
			}
		}
	}
	var errs []error
	for prefix := range seen {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ownerAlive(prefix) {
			continue
		}
		log.Info("sweeping stale testbed", "prefix", prefix)
		if err := Sweep(prefix); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Residue lists what exists of the testbeds beginning with a prefix.
type Residue struct {
	Namespaces []string // in /run/netns
	HostLinks  []string // interfaces in the host's namespace (a testbed creates none)
	Processes  []int    // in its namespaces or carrying MarkerEnv
	Files      []string // /etc/netns directories, owner files, mount/UTS namespace files
}

// Empty reports whether nothing is left.
func (r Residue) Empty() bool {
	return len(r.Namespaces)+len(r.HostLinks)+len(r.Processes)+len(r.Files) == 0
}

func (r Residue) String() string {
	return fmt.Sprintf("namespaces %v, host links %v, processes %v, files %v", r.Namespaces, r.HostLinks, r.Processes, r.Files)
}

// Leftovers reports what exists of the testbeds whose prefix begins with
// prefix (a Testbed's Prefix after Close should give an empty Residue).
func Leftovers(prefix string) (Residue, error) {
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	var r Residue
	r.Namespaces = listPrefixed(netnsDir, prefix)
	links, err := hostLinks(ctx, prefix)
	r.HostLinks = links
	pids, perr := strayPids(ctx, prefix, r.Namespaces)
	r.Processes = pids
	for _, dir := range []string{etcNetnsDir, ownerDir, nsFileDir} {
		for _, name := range listPrefixed(dir, prefix) {
			r.Files = append(r.Files, filepath.Join(dir, name))
		}
	}
	return r, errors.Join(err, perr)
}

// listPrefixed returns the names in dir beginning with prefix (none if dir
// does not exist).
func listPrefixed(dir, prefix string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// hostLinks lists interfaces of the host's namespace whose name begins with
// prefix.
func hostLinks(ctx context.Context, prefix string) ([]string, error) {
	out, err := run(ctx, "ip", "-o", "link", "show")
	if err != nil {
		return nil, err
	}
	var links []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if strings.HasPrefix(name, prefix) {
			links = append(links, name)
		}
	}
	return links, nil
}
