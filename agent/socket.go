package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The local socket: every local user may connect (mode 0666), and the
// kernel tells the agent who did (httpapi.ConnContext), so a request over
// it needs no token and may act only as its sender (root as anyone). This
// file binds it; agent/httpapi authenticates what arrives.

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
func listenSocket(cfg *Config, log *slog.Logger) (net.Listener, error) {
	path := cfg.socketPath()
	if path == "" {
		return nil, nil
	}
	if len(path) > socketPathMax {
		if cfg.Socket == "" {
			log.Warn("no local socket: the default path is too long for a Unix socket; pass --socket PATH", "path", path)
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
		log.Warn("local users other than the directory's owner and group cannot reach the socket: its directory is not searchable by others (chmod o+x, or pass --socket PATH)", "dir", filepath.Dir(path))
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
