package jobexec

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// joinCgroups moves the helper into the job's cgroup, one directory per
// hierarchy, before anything else: every process the job starts is then
// born inside it, and nothing the job does (setsid, double fork, a new
// environment) takes it out. It runs as root, before the identity change:
// cgroup.procs is root's to write.
func joinCgroups(dirs []string) error {
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, d := range dirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return fmt.Errorf("job cgroup %q: want a clean absolute directory", d)
		}
		// O_WRONLY without O_CREATE: a directory that is not a cgroup gets
		// no stray file.
		f, err := os.OpenFile(filepath.Join(d, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("join the job's cgroup %s: %w", d, err)
		}
		var st unix.Statfs_t
		if err := unix.Fstatfs(int(f.Fd()), &st); err != nil || (st.Type != unix.CGROUP_SUPER_MAGIC && st.Type != unix.CGROUP2_SUPER_MAGIC) {
			f.Close()
			return fmt.Errorf("join the job's cgroup %s: not a cgroup directory", d)
		}
		_, err = f.Write(pid)
		f.Close()
		if err != nil {
			return fmt.Errorf("join the job's cgroup %s: %w", d, err)
		}
	}
	return nil
}
