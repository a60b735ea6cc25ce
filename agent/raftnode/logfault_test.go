package raftnode

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// smallFS mounts a tmpfs of size bytes for the test: a real filesystem
// that fills up. It needs root, and skips without it.
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full filesystem is a tmpfs mount, which needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillFS writes a file into dir until the filesystem is full.
func fillFS(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			break
		}
	}
	// Fill the last partial chunk's room too.
	for {
		if _, err := f.Write(chunk[:512]); err != nil {
			break
		}
	}
	return path
}

// TestLogFault_FullDisk: on a real filesystem that fills up, a failed
// raft log write and the write probe both report the fault; it stands
// until a log write succeeds again once there is room.
func TestLogFault_FullDisk(t *testing.T) {
	t.Parallel()
	dir := smallFS(t, "8m")
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	w := &logWatch{}
	logs := &watchedLogs{LogStore: bolt, watch: w}
	n := &Node{dir: dir, watch: w}
	index := uint64(0)
	store := func() error {
		var batch []*raft.Log
		for range 4 {
			index++
			batch = append(batch, &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: make([]byte, 16<<10)})
		}
		return logs.StoreLogs(batch)
	}
	if err := store(); err != nil {
		t.Fatal(err)
	}
	if err := n.Probe(); err != nil {
		t.Fatalf("probe with room: %v", err)
	}
	if err := n.Fault(); err != nil {
		t.Fatalf("fault with room: %v", err)
	}

	filler := fillFS(t, dir)
	if err := n.Probe(); err == nil {
		t.Fatal("the write probe went through on a full filesystem")
	}
	if err := n.Fault(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("fault after a failed probe: %v, want one that says the disk is full", err)
	}
	// bolt may still have free pages in its file: write until it needs more.
	var serr error
	for range 1000 {
		if serr = store(); serr != nil {
			break
		}
	}
	if serr == nil {
		t.Fatal("1000 log writes went through on a full filesystem")
	}
	if err := n.Fault(); err == nil || !strings.Contains(err.Error(), "raft log write failed") {
		t.Fatalf("fault after a failed log write: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := n.Probe(); err != nil {
		t.Fatalf("probe once there is room again: %v", err)
	}
	if err := n.Fault(); err == nil {
		t.Fatal("a probe hid the failed log write: the fault must stand until a log write succeeds")
	}
	index -= 4 // the batch that failed
	if err := store(); err != nil {
		t.Fatalf("log write once there is room again: %v", err)
	}
	if err := n.Fault(); err != nil {
		t.Fatalf("fault after a log write went through: %v", err)
	}
}
