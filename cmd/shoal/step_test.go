package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoal-hpc/shoal/agent/jobrun"
)

// TestStepReportsStartAndExit: shoal step runs the launcher found on PATH
// past the shims' directory (a shim of the same name there is skipped),
// tells the step socket its command and then its exit status, and exits
// with that status.
func TestStepReportsStartAndExit(t *testing.T) {
	// Not parallel: shoal() sets the environment.
	dir := t.TempDir()
	shims, real := filepath.Join(dir, "shims"), filepath.Join(dir, "real")
	os.Mkdir(shims, 0o755)
	os.Mkdir(real, 0o755)
	os.WriteFile(filepath.Join(shims, "fakempi"), []byte("#!/bin/sh\necho shim\nexit 99\n"), 0o755)
	os.WriteFile(filepath.Join(real, "fakempi"), []byte("#!/bin/sh\necho \"real $*\"\nexit 3\n"), 0o755)
	sock := filepath.Join(dir, "steps")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []jobrun.StepMessage, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		var ms []jobrun.StepMessage
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			var m jobrun.StepMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				ms = append(ms, m)
			}
		}
		got <- ms
	}()
	out, errOut, code := shoal(t, map[string]string{"PATH": shims + ":" + real + ":/usr/bin:/bin", "SHOAL_STEP_SOCK": sock},
		"step", "--skip", shims, "--", "fakempi", "-n", "2", "./a.out")
	if code != 3 || out != "real -n 2 ./a.out\n" {
		t.Fatalf("shoal step: exit %d, stdout %q, stderr %q; want the real launcher's exit 3 and output", code, out, errOut)
	}
	ms := <-got
	if len(ms) != 2 || len(ms[0].Cmd) != 4 || ms[0].Cmd[0] != "fakempi" || ms[0].Cmd[3] != "./a.out" || !ms[1].End || ms[1].Exit == nil || *ms[1].Exit != 3 {
		t.Fatalf("step socket got %+v, want the command, then the end with exit 3", ms)
	}
	// Outside a batch script (no socket) it only runs the launcher.
	if _, errOut, code := shoal(t, map[string]string{"PATH": real + ":/usr/bin:/bin", "SHOAL_STEP_SOCK": ""}, "step", "--", "fakempi"); code != 3 || errOut != "" {
		t.Errorf("without a socket: exit %d, stderr %q; want 3 and nothing said", code, errOut)
	}
	if _, _, code := shoal(t, map[string]string{"PATH": shims}, "step", "--skip", shims, "--", "fakempi"); code != 127 {
		t.Errorf("no launcher past the shims: exit %d, want 127", code)
	}
}
