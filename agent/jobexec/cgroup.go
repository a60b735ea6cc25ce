package jobexec

import (
	"bytes"
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
		if st.Type == unix.CGROUP2_SUPER_MAGIC && inCgroup(d, pid) {
			f.Close()
			continue // born in it (startInCgroup): a write would only cost a grace period
		}
		_, err = f.Write(pid)
		f.Close()
		if err != nil {
			return fmt.Errorf("join the job's cgroup %s: %w", d, err)
		}
	}
	return nil
}

// inCgroup reports whether the cgroup directory d lists pid among its
// processes: the kernel's own word that a process is in it. Reading
// cgroup.procs takes none of the locks a write does.
func inCgroup(d string, pid []byte) bool {
	b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
	if err != nil {
		return false
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.Equal(l, pid) {
			return true
		}
	}
	return false
}
