package confine

import (
	"errors"
	"syscall"
)

// errReadOnly is EROFS, for errors.Is.
var errReadOnly error = syscall.EROFS

// ErrExists is New's error for a cgroup that is already there: left by an
// agent that died, or a name used twice.
var ErrExists = errors.New("cgroup already exists")

// ErrNoController is New's error for a limit the node's cgroups cannot
// enforce.
var ErrNoController = errors.New("no such controller")

// ErrParentBusy is Close's error while attempts' cgroups are left.
var ErrParentBusy = errors.New("the parent cgroup still holds attempts' cgroups")
