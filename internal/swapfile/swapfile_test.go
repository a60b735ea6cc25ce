package swapfile

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old, next := bytes.Repeat([]byte("a"), 1<<16), bytes.Repeat([]byte("b"), 1<<16)
	if err := Write(dir, "rec", old); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			if err := Write(dir, "rec", [][]byte{old, next}[i%2]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 200; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "rec"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, old) && !bytes.Equal(b, next) {
			t.Fatalf("read %d bytes that are neither the old record nor the new one", len(b))
		}
	}
	wg.Wait()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Errorf("dir holds %d entries, want the record alone (no temporary file left)", len(ents))
	}
	if fi, err := os.Stat(filepath.Join(dir, "rec")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

func TestWriteIntoAMissingDirLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "gone")
	if err := Write(dir, "rec", []byte("x")); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
