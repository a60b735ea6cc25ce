package jobexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// OpenFilesTimeout bounds how long OpenFiles waits for the helper: a path
// on a hung NFS or FUSE mount would hold it, and the launch waiting for
// it, for ever. The helper is killed then.
const OpenFilesTimeout = time.Minute

// filesFD is the helper's end of the socket on which it hands back the
// descriptors of Spec.Create (ExtraFiles[2]).
const filesFD = 5

// OpenFiles opens the files of spec.Create for writing through the helper,
// as spec's user in spec.Dir, and returns them in the same order, each
// close-on-exec. Nothing of the user's keeps running: the helper opens the
// files and exits, and the caller writes through the descriptors. The
// permission checks are those of the open, so a path the user chose
// reaches only what the user could write; a *SetupError says why a file
// could not be opened.
//
// A file is created (mode 0666 less the umask) or truncated. It must be a
// regular file or a character device (/dev/null): a FIFO or a socket
// could hold the writer for ever. When the helper keeps root's identity
// (a root job under a root agent), a path through a directory that another
// user may write follows no symbolic link of that user's and ends on no
// file with other links (see openNoUserLinks).
//
// The helper is killed when ctx is done or after OpenFilesTimeout: it
// runs in no cgroup, and nothing else would end it.
func OpenFiles(ctx context.Context, exe string, spec Spec) ([]*os.File, error) {
	if len(spec.Create) == 0 {
		return nil, nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("job helper files socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "files"), os.NewFile(uintptr(fds[1]), "files")
	defer ours.Close()
	c, err := Command(exe, spec, nil)
	if err != nil {
		theirs.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, OpenFilesTimeout)
	defer cancel()
	// os/exec kills the helper once ctx is done, also while start waits
	// for its status.
	cmd := exec.CommandContext(ctx, c.Path)
	cmd.Args, cmd.SysProcAttr = c.Args, c.SysProcAttr
	err = start(cmd, theirs)
	theirs.Close()
	if err == nil {
		err = cmd.Wait()
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("job helper: opening %s: %w", strings.Join(spec.Create, ", "), context.Cause(ctx))
	}
	var se *SetupError
	if errors.As(err, &se) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("job helper: %w", err)
	}
	// The helper has exited: its one message waits in the socket.
	oob := make([]byte, unix.CmsgSpace(4*len(spec.Create)))
	buf := make([]byte, 1)
	_, oobn, _, _, err := unix.Recvmsg(int(ours.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
	if err != nil {
		return nil, fmt.Errorf("job helper: receive the opened files: %w", err)
	}
	var got []int
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err == nil {
		for _, m := range msgs {
			var fds []int
			if fds, err = unix.ParseUnixRights(&m); err != nil {
				break
			}
			got = append(got, fds...)
		}
	}
	if err != nil || len(got) != len(spec.Create) {
		for _, fd := range got {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("job helper: received %d of %d opened files: %v", len(got), len(spec.Create), err)
	}
	files := make([]*os.File, len(got))
	for i, fd := range got {
		name := spec.Create[i]
		if !filepath.IsAbs(name) && spec.Dir != "" {
			name = filepath.Join(spec.Dir, name)
		}
		files[i] = os.NewFile(uintptr(fd), name)
	}
	return files, nil
}

// sendFiles opens the files of Create and hands their descriptors to the
// agent on filesFD.
func (s *Spec) sendFiles() error {
	fds := make([]int, 0, len(s.Create))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	asRoot := os.Geteuid() == 0
	for _, p := range s.Create {
		fd, err := openForWriting(p, asRoot)
		if err != nil {
			if !filepath.IsAbs(p) && s.Dir != "" {
				p = filepath.Join(s.Dir, p)
			}
			return fmt.Errorf("%s cannot write %s: %w", s.Cred, p, err)
		}
		fds = append(fds, fd)
	}
	if err := unix.Sendmsg(filesFD, []byte{0}, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("job helper: hand over the opened files: %w", err)
	}
	return nil
}

// openFlags open an output file without waiting (a FIFO without a reader
// fails at once instead of holding the helper) and without making it a
// controlling terminal.
const openFlags = unix.O_WRONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// openForWriting opens path (relative to the working directory) for
// writing, creating it, and truncates it once it is known to be a file the
// writer may have.
func openForWriting(path string, asRoot bool) (int, error) {
	var fd int
	var err error
	if asRoot {
		fd, err = openNoUserLinks(path)
	} else {
		fd, err = unix.Open(path, openFlags|unix.O_CREAT, 0o666)
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if err := unix.Ftruncate(fd, 0); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("truncate: %w", err)
		}
	case unix.S_IFCHR:
	default:
		unix.Close(fd)
		return -1, errors.New("not a regular file or a device")
	}
	return fd, nil
}

// maxLinks bounds the symbolic links one resolution follows, as the
// kernel's own (ELOOP after 40).
const maxLinks = 40

// openNoUserLinks opens path for writing as root without letting another
// user steer the write: the path is resolved one component at a time from
// descriptors, and in a directory that a user other than root may write
// (a home, /tmp, a shared project directory) it follows a symbolic link
// only when root owns the link, and opens an existing file only when that
// directory holds its only link. Otherwise a user could plant
// `out.txt -> /etc/shadow`, a link `logs -> /etc` above it, or a hard link
// to a root file, and have a root job's output truncate or fill it.
// Directories only root may write are trusted as they are (a root-made
// /home -> /data/home link keeps working). In a directory another user may
// write, an existing file must be root's too: a file of the user's there,
// even with one link, is the user's to point at something (a file the user
// then renames away, truncated by root) and root does not write into it.
func openNoUserLinks(path string) (int, error) {
	return walkNoUserLinks(path, false)
}

// openDirNoUserLinks resolves the directory path as openNoUserLinks
// resolves a file's directories and returns it open (O_PATH), for a root
// helper to enter with fchdir: chdir(2) would follow any link on the way,
// and a user's `proj -> /etc` would land root's output files in /etc.
func openDirNoUserLinks(path string) (int, error) {
	return walkNoUserLinks(path, true)
}

// walkNoUserLinks is openNoUserLinks, or openDirNoUserLinks when dirOnly.
func walkNoUserLinks(path string, dirOnly bool) (int, error) {
	start := "."
	if filepath.IsAbs(path) {
		start = "/"
	}
	dir, err := unix.Open(start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer func() {
		if dir >= 0 {
			unix.Close(dir)
		}
	}()
	comps := strings.Split(path, "/")
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		if c == "" || (c == "." && len(comps) > 0) {
			continue
		}
		last := len(comps) == 0
		trusted, err := rootOnly(dir)
		if err != nil {
			return -1, err
		}
		if last && !dirOnly {
			fd, err := openLast(dir, c, trusted)
			if !errors.Is(err, unix.ELOOP) {
				return fd, err
			}
			// A symbolic link: decided below, as one above it would be.
		}
		next, err := unix.Openat(dir, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			unix.Close(dir)
			dir = next
		case unix.S_IFLNK:
			// The link read is the one just checked: read through its descriptor.
			target, err := readlinkFD(next)
			unix.Close(next)
			if err != nil {
				return -1, err
			}
			if !trusted && st.Uid != 0 {
				return -1, fmt.Errorf("%s is a symbolic link of uid %d in a directory other users may write: root does not follow those", c, st.Uid)
			}
			if links++; links > maxLinks {
				return -1, unix.ELOOP
			}
			if filepath.IsAbs(target) {
				root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					return -1, err
				}
				unix.Close(dir)
				dir = root
			}
			if target == "" {
				return -1, unix.ENOENT
			}
			comps = append(strings.Split(target, "/"), comps...)
		default:
			unix.Close(next)
			return -1, unix.ENOTDIR
		}
	}
	if dirOnly {
		fd := dir
		dir = -1
		return fd, nil
	}
	// The path named a directory ("", ".", "dir/").
	return -1, unix.EISDIR
}

// openLast opens the file name in the directory open at dir for a root
// writer, never through a symbolic link (ELOOP). In a directory another
// user may write (not trusted) a new file is created with O_EXCL, and an
// existing one is taken only when it is root's with no other link.
func openLast(dir int, name string, trusted bool) (int, error) {
	if trusted {
		return unix.Openat(dir, name, openFlags|unix.O_CREAT|unix.O_NOFOLLOW, 0o666)
	}
	for range 3 { // the name may come and go meanwhile
		fd, err := unix.Openat(dir, name, openFlags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o666)
		if !errors.Is(err, unix.EEXIST) {
			return fd, err
		}
		fd, err = unix.Openat(dir, name, openFlags|unix.O_NOFOLLOW, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		switch {
		case st.Nlink > 1:
			unix.Close(fd)
			return -1, fmt.Errorf("%s has %d links in a directory other users may write: root does not write through those", name, st.Nlink)
		case st.Uid != 0:
			unix.Close(fd)
			return -1, fmt.Errorf("%s is a file of uid %d in a directory other users may write: root does not write into those", name, st.Uid)
		}
		return fd, nil
	}
	return -1, fmt.Errorf("%s: created and removed meanwhile: %w", name, unix.EAGAIN)
}

// rootOnly says whether only root may change the entries of the directory
// open at fd: root's, not writable by others, and writable by its group
// only when that group is root's.
func rootOnly(fd int) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	return st.Uid == 0 && st.Mode&0o002 == 0 && (st.Mode&0o020 == 0 || st.Gid == 0), nil
}

// readlinkFD reads the target of the symbolic link open (O_PATH) at fd.
func readlinkFD(fd int) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", fmt.Errorf("read link: %w", err)
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
