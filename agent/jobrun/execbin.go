package jobrun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ExecBinName is the file name of the small binary jobs start through
// (cmd/shoal-exec): the job helper and MPI's remote shell. Every process
// of a job is started through it, so its start is paid once per process,
// and it costs a fraction of the whole shoal binary's (docs/results.md).
const ExecBinName = "shoal-exec"

// ExecBin is the binary an agent whose shoal executable is bin starts
// its jobs through: the shoal-exec in bin's directory, or bin itself
// ("" for bin "") when there is none. The job helper runs as root, so a
// shoal-exec that is no regular file, belongs to another owner than bin,
// or may be written by more users than bin may be, is not used; err then
// says why (for a warning), and exe is bin.
func ExecBin(bin string) (exe string, err error) {
	if bin == "" {
		return "", nil
	}
	p := filepath.Join(filepath.Dir(bin), ExecBinName)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return bin, nil
	}
	if err != nil {
		return bin, fmt.Errorf("jobs start through %s: %w", bin, err)
	}
	bi, err := os.Stat(bin)
	if err != nil {
		return bin, fmt.Errorf("jobs start through %s: %w", bin, err)
	}
	if err := asSafeAs(fi, bi); err != nil {
		return bin, fmt.Errorf("jobs start through %s, not %s: it %w; make it %s's and writable by its owner only", bin, p, err, bin)
	}
	return p, nil
}

// asSafeAs is nil when the file fi may be run as root wherever bin's file
// bi is: a regular file, executable, of bi's owner, whose group and
// others may write it only where they may write bi.
func asSafeAs(fi, bi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return errors.New("is not a regular file")
	}
	if fi.Mode().Perm()&0o100 == 0 {
		return errors.New("is not executable by its owner")
	}
	if extra := fi.Mode().Perm() &^ bi.Mode().Perm() & 0o022; extra != 0 {
		return fmt.Errorf("may be written by more users (mode %04o)", fi.Mode().Perm())
	}
	fs, ok1 := fi.Sys().(*syscall.Stat_t)
	bs, ok2 := bi.Sys().(*syscall.Stat_t)
	if ok1 && ok2 && fs.Uid != bs.Uid {
		return fmt.Errorf("belongs to uid %d, not %d", fs.Uid, bs.Uid)
	}
	return nil
}
