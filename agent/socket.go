package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The local socket: every local user may connect (mode 0666), and the
// kernel tells the agent who did (SO_PEERCRED), so a request over it needs
// no token and may act only as its sender (root as anyone). Over TCP the
// cluster token still authenticates, and token holders are administrators.

// SocketOff as Config.Socket turns the local socket off.
const SocketOff = "none"

// socketPathMax is the longest path a Unix socket address holds on Linux
// (sun_path is 108 bytes with the trailing NUL).
const socketPathMax = 107

// socketPath is where the local socket listens, or "" when it is off.
func (c *Config) socketPath() string {
	switch c.Socket {
	case SocketOff:
		return ""
	case "":
		return filepath.Join(c.DataDir, "shoal.sock")
	}
	return c.Socket
}

// listenSocket binds the local socket. A socket file nobody listens on
// (left by a crash) is removed; a live one means another agent uses this
// path, which is an error. The default path in a deep data directory may be
// too long for a socket address: then the agent goes without, with a
// warning, rather than refusing to start.
func (a *Agent) listenSocket() (net.Listener, error) {
	path := a.cfg.socketPath()
	if path == "" {
		return nil, nil
	}
	if len(path) > socketPathMax {
		if a.cfg.Socket == "" {
			a.log.Warn("no local socket: the default path is too long for a Unix socket; pass --socket PATH", "path", path)
			return nil, nil
		}
		return nil, fmt.Errorf("socket path %s is %d bytes, over the %d a Unix socket allows", path, len(path), socketPathMax)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create the socket's directory: %w", err)
	}
	if err := socketDirSafe(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("let local users reach socket %s: %w", path, err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err == nil && st.Mode().Perm()&0o001 == 0 {
		a.log.Warn("local users other than the directory's owner and group cannot reach the socket: its directory is not searchable by others (chmod o+x, or pass --socket PATH)", "dir", filepath.Dir(path))
	}
	return ln, nil
}

// socketDirSafe refuses a socket directory that another user could write
// to (unless it is sticky, as /tmp is): the agent chmods the socket by
// path after creating it, and there a user could swap the socket for a
// link to any file between the two, which root would then make writable.
func socketDirSafe(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.IsDir():
		return fmt.Errorf("socket directory %s is not a directory (a link?): pass --socket in a real directory", dir)
	case ok && int(sys.Uid) != os.Geteuid() && sys.Uid != 0:
		return fmt.Errorf("socket directory %s belongs to uid %d, not to the agent: pass --socket in a directory of root's (e.g. /run/shoal)", dir, sys.Uid)
	case st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0:
		return fmt.Errorf("socket directory %s is writable by other users (mode %o): pass --socket in a directory only its owner may write (e.g. /run/shoal)", dir, st.Mode().Perm())
	}
	return nil
}

func removeStaleSocket(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check socket path %s: %w", path, err)
	}
	if st.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("socket path %s exists and is not a socket: remove it or pass --socket PATH", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("another process listens on socket %s (another agent with this data dir?)", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// SocketPath is where the local socket listens, "" when there is none.
func (a *Agent) SocketPath() string {
	if a.sockLn == nil {
		return ""
	}
	return a.sockLn.Addr().String()
}

// localPeer is who sent a request over the local socket; err is set when
// the kernel would not say, and then the request is refused.
type localPeer struct {
	uid uint32
	err error
}

type localPeerKey struct{}

// connContext marks connections accepted on the local socket with their
// sender's uid. TCP connections carry nothing and keep the token check.
func connContext(ctx context.Context, c net.Conn) context.Context {
	uc, ok := unwrapConn(c).(*net.UnixConn)
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, localPeerKey{}, peerCred(uc))
}

func peerCred(uc *net.UnixConn) localPeer {
	raw, err := uc.SyscallConn()
	if err != nil {
		return localPeer{err: err}
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return localPeer{err: err}
	}
	if credErr != nil {
		return localPeer{err: fmt.Errorf("SO_PEERCRED: %w", credErr)}
	}
	return localPeer{uid: cred.Uid}
}

// peerOf says whether r came over the local socket, and from whom.
func peerOf(r *http.Request) (localPeer, bool) {
	p, ok := r.Context().Value(localPeerKey{}).(localPeer)
	return p, ok
}

// actAs returns the user a request may act as when it claims to act as
// claimed. Over TCP the token holder is an administrator: the claim stands.
// Over the local socket an empty claim is the sender, root may claim
// anyone, and anyone else only themselves. An error is a refusal (403).
func actAs(r *http.Request, claimed string) (string, error) {
	p, local := peerOf(r)
	if !local {
		return claimed, nil
	}
	uid := strconv.FormatUint(uint64(p.uid), 10)
	u, err := user.LookupId(uid)
	if err != nil {
		if p.uid == 0 {
			u = &user.User{Uid: "0", Username: "root"}
		} else {
			return "", fmt.Errorf("you are uid %s, which has no user name on this node", uid)
		}
	}
	if claimed == "" || claimed == u.Username || p.uid == 0 {
		return cmp.Or(claimed, u.Username), nil
	}
	if o, err := user.Lookup(claimed); err == nil && o.Uid == uid {
		return claimed, nil // another name of the same uid
	}
	return "", fmt.Errorf("you are %s (uid %s); only root may act as %s", u.Username, uid, claimed)
}

// privileged reports whether r may see everything: over TCP (token
// holders are administrators) or from root over the local socket.
func privileged(r *http.Request) bool {
	p, local := peerOf(r)
	return !local || p.uid == 0
}

// mayReadEnv reports whether r may see the environment of owner's job: a
// job's --env often carries credentials, so over the local socket only its
// owner and root see the values (like Slurm, whose squeue shows others'
// jobs but not their environment).
func mayReadEnv(r *http.Request, owner string) bool {
	if privileged(r) {
		return true
	}
	u, err := actAs(r, "")
	return err == nil && u == owner
}

// hiddenEnv keeps the names of a job's environment variables and hides
// their values.
func hiddenEnv(env []string) []string {
	if env == nil {
		return nil
	}
	out := make([]string, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out[i] = k + "=(hidden)"
	}
	return out
}
