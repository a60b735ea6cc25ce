package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

var (
	nvidiaNode = regexp.MustCompile(`^nvidia([0-9]+)$`)
	renderNode = regexp.MustCompile(`^renderD([0-9]+)$`)
)

// GPUDevices reads the device numbers of a node's GPUs from its device
// directory dev (/dev): the NVIDIA nodes nvidia0, nvidia1, ... in the
// order of their numbers, or, on a node without them, the DRM render
// nodes dri/renderD128, ... (AMD, Intel) in theirs. Index i of the result
// is GPU i of the node's inventory when the counts agree; the caller
// checks that they do. Each is stat'ed rather than assumed, so a node
// whose driver numbers its devices otherwise is read as it is.
func GPUDevices(dev string) ([]Device, error) {
	out, err := scanDevices(dev, nvidiaNode)
	if err != nil || len(out) > 0 {
		return out, err
	}
	return scanDevices(filepath.Join(dev, "dri"), renderNode)
}

// scanDevices stats the character devices in dir whose names match re
// (with their number as its one group), ordered by that number.
func scanDevices(dir string, re *regexp.Regexp) ([]Device, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list GPU devices: %w", err)
	}
	type numbered struct {
		n   int
		dev Device
	}
	var found []numbered
	for _, e := range ents {
		m := re.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		p := filepath.Join(dir, e.Name())
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			return nil, fmt.Errorf("GPU device %s: %w", p, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR {
			return nil, fmt.Errorf("GPU device %s: not a character device", p)
		}
		rdev := uint64(st.Rdev)
		found = append(found, numbered{n, Device{Major: unix.Major(rdev), Minor: unix.Minor(rdev)}})
	}
	slices.SortFunc(found, func(a, b numbered) int { return a.n - b.n })
	out := make([]Device, len(found))
	for i, f := range found {
		out[i] = f.dev
	}
	return out, nil
}
