package jobrun

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Attempt directories in the temporary directory (the MPI launcher's
// remote shell, hostfiles, step socket; Open MPI's session base; the
// directory of capability files, capfile.go) go when
// their attempt ends. An agent killed with SIGKILL leaves them behind, and
// nothing else would ever remove them: the next life of the agent does, at
// start, before any attempt of its own. Several agents may share a
// machine and its /tmp (test clusters, several nodes per host), so each
// names its directories with a tag of its own data directory and removes
// only those.

// tempTag is the tag of this agent's attempt directories: a short hash of
// its data directory's absolute path, stable across restarts.
func tempTag(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(dataDir))
	return hex.EncodeToString(sum[:6])
}

// tempPrefix is the name pattern of attempt k's directories of one kind
// ("job", "ompi") for os.MkdirTemp.
func (n *Node) tempPrefix(kind string, k Key) string {
	return fmt.Sprintf("shoal-%s%d.%d-%s-", kind, k.Job, k.Attempt, n.tmpTag)
}

// removeLeftoverTempDirs removes the attempt directories an earlier life
// of this agent left in the temporary directory. Root's own ones go as
// root; an Open MPI session base has been handed to the job's owner, and
// root does nothing inside a directory of a user's: it goes through the
// job helper, as that user.
//
// The directories of adopted attempts stay, with the capability files of
// the earlier life, which their processes may still read; a later life
// without adoptions removes those.
func (n *Node) removeLeftoverTempDirs(adopted map[Key]bool) {
	var found []string
	kinds := []string{"job", "ompi", "caps"}
	if len(adopted) > 0 {
		kinds = kinds[:2]
	}
	for _, kind := range kinds {
		m, err := filepath.Glob(filepath.Join(os.TempDir(), "shoal-"+kind+"*-"+n.tmpTag+"-*"))
		if err != nil {
			n.log.Warn("list leftover attempt directories", "err", err)
			return
		}
		found = append(found, m...)
	}
	me := os.Geteuid()
	for _, dir := range found {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue // not one of ours: ours are directories
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			continue
		}
		if adoptedTempDir(filepath.Base(dir), n, adopted) {
			continue
		}
		n.log.Info("removing an attempt directory of an earlier life", "dir", dir)
		if int(st.Uid) == me {
			err = os.RemoveAll(dir)
		} else {
			err = n.removeAsUID(st.Uid, dir)
		}
		if err != nil {
			n.log.Warn("remove leftover attempt directory", "dir", dir, "err", err)
		}
	}
}

// removeAsUID removes dir as the user with that uid, through the helper.
func (n *Node) removeAsUID(uid uint32, dir string) error {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return fmt.Errorf("owner uid %d: %w", uid, err)
	}
	return n.asOwner(u.Username, "", dir)
}

// adoptedTempDir reports whether name is a temporary directory of one of
// the adopted attempts.
func adoptedTempDir(name string, n *Node, adopted map[Key]bool) bool {
	for k := range adopted {
		for _, kind := range []string{"job", "ompi"} {
			if strings.HasPrefix(name, n.tempPrefix(kind, k)) {
				return true
			}
		}
	}
	return false
}
