package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// weighParents gives the cgroups between the agent's cgroup (or the root,
// for an absolute parent) and the attempts' cgroups the scheduler weight of
// as many tasks as the node has CPUs. Each level would otherwise weigh as
// one task: every job of the node together would get the CPU share of a
// single process beside the agent's, which on a loaded node slowed a
// 32-rank launch by 300 ms. file is cpu.shares (v1, 1024 a task) or
// cpu.weight (v2, 100 a task); dir is the parent's directory.
func weighParents(dir, file string, levels int, perTask, maxWeight int64) error {
	w := strconv.FormatInt(min(maxWeight, perTask*int64(runtime.NumCPU())), 10)
	for range levels {
		err := os.WriteFile(filepath.Join(dir, file), []byte(w), 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) { // a level without the controller

			return fmt.Errorf("weigh the parent cgroup %s: %w", dir, err)
		}
		dir = filepath.Dir(dir)
	}
	return nil
}

// parentLevels is how many cgroups Config.Parent makes: "shoal/n0" is two.
func parentLevels(parent string) int {
	return len(strings.Split(strings.Trim(parent, "/"), "/"))
}
