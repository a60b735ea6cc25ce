package netns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// nsFileDir holds each node's persistent mount and UTS namespaces, bound to
// files like iproute2 binds network namespaces in /run/netns. It is a
// private bind mount of itself (made once per boot, like /run/netns), which
// binding a mount namespace requires.
//
// Why persistent namespaces instead of `ip netns exec NS unshare --uts ...`
// per command: that creates and destroys a mount namespace per command, and
// each teardown waits for an expedited RCU grace period; on a busy 2-core
// host that stalled single commands for seconds to minutes. Entering
// existing namespaces (setns) costs nothing of the kind.
const nsFileDir = ownerDir + "/ns"

var nsDirOnce struct {
	sync.Mutex
	done bool
}

// ensureNSFileDir makes nsFileDir a private mount point. A file lock keeps
// two processes from stacking two bind mounts (the upper one would hide
// the namespace files bound under the lower one).
func ensureNSFileDir(ctx context.Context) error {
	nsDirOnce.Lock()
	defer nsDirOnce.Unlock()
	if nsDirOnce.done {
		return nil
	}
	if err := os.MkdirAll(nsFileDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", nsFileDir, err)
	}
	lock, err := os.OpenFile(filepath.Join(ownerDir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("open lock: %w", err)
	}
	defer lock.Close() // releases the flock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	mounted, err := isMountPoint(nsFileDir)
	if err != nil {
		return err
	}
	if !mounted {
		if _, err := run(ctx, "mount", "--bind", nsFileDir, nsFileDir); err != nil {
			return err
		}
	}
	if _, err := run(ctx, "mount", "--make-private", nsFileDir); err != nil {
		return err
	}
	nsDirOnce.done = true
	return nil
}

// isMountPoint reports whether dir is a mount point of this process's
// mount namespace.
func isMountPoint(dir string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && fields[4] == dir {
			return true, nil
		}
	}
	return false, sc.Err()
}

// nodeNSFiles returns the files binding a node's mount and UTS namespaces.
func nodeNSFiles(ns string) (mnt, uts string) {
	return filepath.Join(nsFileDir, ns+".mnt"), filepath.Join(nsFileDir, ns+".uts")
}

// nodeSetupScript runs in the node's new mount and UTS namespaces: the
// node's hostname, its hosts file over /etc/hosts, and a sysfs that shows
// the node's interfaces (what ip netns exec does per command). The host's
// cgroup hierarchies are carried over the new sysfs (a fresh sysfs has an
// empty /sys/fs/cgroup), so agents in the testbed confine jobs as on a
// real node.
const nodeSetupScript = `hostname "$0" && mount --bind "$1" /etc/hosts && ` +
	`cg=$(mktemp -d) && mount --rbind /sys/fs/cgroup "$cg" && ` +
	`umount -l /sys && mount -t sysfs sysfs /sys && ` +
	`mount --move "$cg" /sys/fs/cgroup && rmdir "$cg"`

// addNodeNamespaces creates the node's persistent mount and UTS namespaces.
func (tb *Testbed) addNodeNamespaces(ctx context.Context, n *NodeInfo) error {
	mnt, uts := nodeNSFiles(n.Namespace)
	tb.mu.Lock()
	tb.nsFiles = append(tb.nsFiles, mnt, uts)
	tb.mu.Unlock()
	for _, f := range []string{mnt, uts} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return fmt.Errorf("create namespace file: %w", err)
		}
	}
	hosts := filepath.Join(etcNetnsDir, n.Namespace, "hosts")
	_, err := run(ctx, "nsenter", "--net="+filepath.Join(netnsDir, n.Namespace),
		"unshare", "--mount="+mnt, "--uts="+uts, "--propagation", "private",
		"sh", "-c", nodeSetupScript, n.Name, hosts)
	if err != nil {
		return fmt.Errorf("mount and uts namespaces: %w", err)
	}
	return nil
}

// removeNSFiles unmounts and removes namespace files.
func removeNSFiles(files []string) error {
	var errs []error
	for _, f := range files {
		if err := syscall.Unmount(f, syscall.MNT_DETACH); err != nil &&
			!errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", f, err))
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
