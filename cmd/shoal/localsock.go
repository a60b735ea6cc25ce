package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"
)

// localSockets are where a packaged agent listens for local users, tried
// in order when no address and no credentials are given: the package's
// /run/shoal (shoal.hcl's socket, RuntimeDirectory=shoal), then the
// default data dir's, where an agent without a config puts it.
var localSockets = []string{"/run/shoal/shoal.sock", "/var/lib/shoal/shoal.sock"}

// hasCredentials reports whether the caller gave a token or a certificate:
// then the TCP API is meant, as before.
func hasCredentials(c *cli.Context) bool {
	return c.String("token") != "" || c.String("token-file") != "" || c.String("cert-file") != ""
}

// localSocket returns the first candidate that is a socket in a directory
// only root may change. The user's job specs, environment included, go to
// whatever listens there, so a socket that another user could have put in
// place (a world-writable directory, a symlink, a directory of theirs) is
// passed over.
func localSocket(candidates []string) (string, bool) {
	for _, p := range candidates {
		st, err := os.Lstat(p)
		if err != nil || st.Mode().Type() != fs.ModeSocket || !rootOnly(filepath.Dir(p)) {
			continue
		}
		return p, true
	}
	return "", false
}

// rootOnly reports whether dir and every directory above it are root's
// and writable by no one else (sticky /tmp is not enough: its owner may
// still create the name first).
func rootOnly(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		st, err := os.Lstat(d)
		if err != nil || !st.IsDir() {
			return false
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok || sys.Uid != 0 || st.Mode().Perm()&0o022 != 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}
