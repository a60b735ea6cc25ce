package jobrun

import (
	"fmt"
	"os"

	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// wrapperScript is the remote shell an MPI launcher of one attempt runs:
// `shoal rsh` with the file of the attempt's capability on this node
// (capfile.go) and the ways to the local agent: its socket (sock, "" when
// off), where the kernel names the caller, and its HTTPS API.
func wrapperScript(capFile, sock, agentAddr, caFile, caCerts, bin string) string {
	return fmt.Sprintf("#!/bin/sh\n%s='%s' SHOAL_AGENT_SOCK='%s' SHOAL_AGENT_ADDR='%s' SHOAL_CA_FILE='%s' SHOAL_CA_CERTS='%s' exec '%s' rsh \"$@\"\n",
		CapFileVar, capFile, sock, agentAddr, caFile, caCerts, bin)
}

// writeLauncherWrapper creates the small script an MPI launcher of attempt
// k runs as its remote shell (`shoal rsh` with the attempt's capability)
// and returns its directory (the caller removes it) and its path.
//
// The construction leaves the job's owner nothing to swap: the directory is
// root's (a fresh, randomly named one, in a sticky /tmp where nobody else
// may rename or replace it) and the owner may only pass through it (0711);
// the script is created there with O_EXCL and handed to the owner with
// fchown on its descriptor, never chown by path. (The directory used to be
// the owner's, and a symlink renamed over the script between two chowns by
// path got a root-owned file of the user's choosing chowned to them.)
func (n *Node) writeLauncherWrapper(k Key, script string, cred *jobexec.Cred) (dir, path string, err error) {
	dir, err = n.attemptTempDir(k)
	if err != nil {
		return "", "", err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", "", fmt.Errorf("launcher wrapper dir: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile("rsh", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return "", "", fmt.Errorf("write launcher wrapper: %w", err)
	}
	defer f.Close()
	if cred != nil {
		if err := f.Chown(int(cred.UID), int(cred.GID)); err != nil {
			return "", "", fmt.Errorf("hand the launcher wrapper to %s: %w", cred, err)
		}
	}
	if _, err := f.WriteString(script); err != nil {
		return "", "", fmt.Errorf("write launcher wrapper: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("write launcher wrapper: %w", err)
	}
	return dir, dir + "/rsh", nil
}

// attemptTempDir makes a fresh directory of root's for attempt k's files on
// this node, which the job's owner may only pass through (0711): see
// writeLauncherWrapper. The caller removes it; one left by an agent killed
// meanwhile goes at its next start (tmpdirs.go).
func (n *Node) attemptTempDir(k Key) (string, error) {
	dir, err := os.MkdirTemp("", n.tempPrefix("job", k))
	if err != nil {
		return "", fmt.Errorf("attempt dir: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("attempt dir: %w", err)
	}
	return dir, nil
}

// writeOwnedFile creates name in dir, a directory writeLauncherWrapper
// made, with content, handed to the job's owner the same way as the
// wrapper (O_EXCL, fchown on the descriptor), and returns its path.
func writeOwnedFile(dir, name, content string, cred *jobexec.Cred) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	defer f.Close()
	if cred != nil {
		if err := f.Chown(int(cred.UID), int(cred.GID)); err != nil {
			return "", fmt.Errorf("hand %s to %s: %w", name, cred, err)
		}
	}
	if _, err := f.WriteString(content); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return dir + "/" + name, nil
}
