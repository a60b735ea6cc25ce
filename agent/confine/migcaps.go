package confine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// MIGMinorsFile is where the NVIDIA driver lists the minor numbers of
// its MIG capability nodes.
const MIGMinorsFile = "/proc/driver/nvidia-caps/mig-minors"

// MIGCap names one MIG capability as the driver's table does: access to
// GPU instance GI of the GPU whose /dev/nvidiaN minor is GPU, or, with CI
// 0 or more, to compute instance CI of it. A process needs both of its
// instance's, and the GPU's node, to use a MIG instance.
type MIGCap struct {
	GPU, GI, CI int
}

// String is the capability's name in the driver's table.
func (c MIGCap) String() string {
	if c.CI < 0 {
		return fmt.Sprintf("gpu%d/gi%d/access", c.GPU, c.GI)
	}
	return fmt.Sprintf("gpu%d/gi%d/ci%d/access", c.GPU, c.GI, c.CI)
}

// MIGMinors is the driver's table of MIG capabilities: the minor number
// of each one's node, /dev/nvidia-caps/nvidia-capM. The driver lists
// every instance a GPU could hold, not only those that exist.
type MIGMinors map[MIGCap]uint32

// Bounds of the table's input: the driver's own is about 30 KiB for
// eight GPUs, and a file that is not the driver's must not take the
// agent's memory.
const (
	maxMIGMinorsBytes = 1 << 20
	maxMIGMinorsLine  = 256
	maxMIGID          = 1 << 16
	maxMinor          = 1<<20 - 1 // the kernel's MINORBITS
)

// ReadMIGMinors reads the driver's table of MIG capabilities from path
// (MIGMinorsFile).
func ReadMIGMinors(path string) (MIGMinors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the driver's MIG capability table: %w", err)
	}
	defer func() { _ = f.Close() }()
	t, err := ParseMIGMinors(f)
	if err != nil {
		return nil, fmt.Errorf("the driver's MIG capability table %s: %w", path, err)
	}
	return t, nil
}

// ParseMIGMinors parses the driver's table of MIG capabilities: one
// "NAME MINOR" a line, e.g. "gpu0/gi1/access 12" and
// "gpu0/gi1/ci0/access 13". Other capabilities ("config 1", "monitor 2")
// are skipped. It is read from a file the agent, as root, trusts no more
// than it must: a malformed line, a number out of range, a capability
// listed twice or two sharing one minor (allowing a job its own would
// then allow it another's) are errors, and so is input past 1 MiB.
func ParseMIGMinors(r io.Reader) (MIGMinors, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxMIGMinorsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxMIGMinorsBytes {
		return nil, fmt.Errorf("longer than %d bytes: not the driver's table", maxMIGMinorsBytes)
	}
	t := MIGMinors{}
	names := map[uint32]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, maxMIGMinorsLine), maxMIGMinorsLine)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d %q: want a capability and its minor number, e.g. gpu0/gi1/access 12", n, sc.Text())
		}
		minor, err := strconv.ParseUint(fields[1], 10, 32)
		if err != nil || minor > maxMinor {
			return nil, fmt.Errorf("line %d: minor number %q: want 0 to %d", n, fields[1], maxMinor)
		}
		if prev, ok := names[uint32(minor)]; ok {
			return nil, fmt.Errorf("line %d: minor %d listed for both %s and %s", n, minor, prev, fields[0])
		}
		names[uint32(minor)] = fields[0]
		c, ok := parseMIGCap(fields[0])
		if !ok {
			continue
		}
		if _, dup := t[c]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice", n, c)
		}
		t[c] = uint32(minor)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("a line longer than %d bytes: not the driver's table", maxMIGMinorsLine)
		}
		return nil, fmt.Errorf("read: %w", err)
	}
	return t, nil
}

// parseMIGCap reads "gpuN/giG/access" or "gpuN/giG/ciC/access"; false
// for any other name.
func parseMIGCap(name string) (MIGCap, bool) {
	parts := strings.Split(name, "/")
	if (len(parts) != 3 && len(parts) != 4) || parts[len(parts)-1] != "access" {
		return MIGCap{}, false
	}
	gpu, ok1 := migID(parts[0], "gpu")
	gi, ok2 := migID(parts[1], "gi")
	ci, ok3 := -1, true
	if len(parts) == 4 {
		ci, ok3 = migID(parts[2], "ci")
	}
	return MIGCap{GPU: gpu, GI: gi, CI: ci}, ok1 && ok2 && ok3
}

// migID reads the number after prefix in s as the driver writes it:
// decimal digits, no sign, no leading zero.
func migID(s, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(s, prefix)
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" || (digits[0] == '0' && digits != "0") {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n >= maxMIGID {
		return 0, false
	}
	return n, true
}

// MIGCapDevices are the device numbers of caps' nodes, found by their
// minors in t and stat'ed in dir (/dev/nvidia-caps) rather than assumed:
// the driver takes its major dynamically. An error names the first cap
// the table lacks, whose node dir lacks, or whose node is not the
// character device the table says, or caps whose nodes have different
// majors (one driver serves them all): rules from a table that does not
// match the nodes could take a job's own instance away.
func MIGCapDevices(t MIGMinors, dir string, caps []MIGCap) ([]Device, error) {
	out := make([]Device, 0, len(caps))
	for _, c := range caps {
		minor, ok := t[c]
		if !ok {
			return nil, fmt.Errorf("the driver's MIG capability table has no %s", c)
		}
		p := filepath.Join(dir, "nvidia-cap"+strconv.FormatUint(uint64(minor), 10))
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			return nil, fmt.Errorf("%s (the node of %s): %w", p, c, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR {
			return nil, fmt.Errorf("%s (the node of %s): not a character device", p, c)
		}
		d := Device{Major: unix.Major(uint64(st.Rdev)), Minor: unix.Minor(uint64(st.Rdev))}
		if d.Minor != minor {
			return nil, fmt.Errorf("%s is %s, and the driver's table gives %s minor %d", p, d, c, minor)
		}
		if len(out) > 0 && d.Major != out[0].Major {
			return nil, fmt.Errorf("%s is %s, another MIG capability node major %d", p, d, out[0].Major)
		}
		out = append(out, d)
	}
	return out, nil
}
