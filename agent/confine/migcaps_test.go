package confine

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// driverTable is a mig-minors file as the driver writes it, cut short:
// the config and monitor capabilities, then each GPU instance's access
// and its compute instances'.
const driverTable = `config 1
monitor 2
gpu0/gi0/access 3
gpu0/gi0/ci0/access 4
gpu0/gi0/ci1/access 5
gpu0/gi1/access 12
gpu0/gi1/ci0/access 13
gpu0/gi1/ci1/access 14
gpu1/gi1/access 147
gpu1/gi1/ci0/access 148
`

func TestParseMIGMinors(t *testing.T) {
	t.Parallel()
	got, err := ParseMIGMinors(strings.NewReader(driverTable))
	if err != nil {
		t.Fatal(err)
	}
	want := MIGMinors{
		{0, 0, -1}: 3, {0, 0, 0}: 4, {0, 0, 1}: 5,
		{0, 1, -1}: 12, {0, 1, 0}: 13, {0, 1, 1}: 14,
		{1, 1, -1}: 147, {1, 1, 0}: 148,
	}
	if len(got) != len(want) {
		t.Errorf("table = %v, want %v", got, want)
	}
	for c, m := range want {
		if got[c] != m {
			t.Errorf("%s = %d, want %d", c, got[c], m)
		}
	}
	if s := (MIGCap{0, 1, 0}).String(); s != "gpu0/gi1/ci0/access" {
		t.Errorf("name of GPU 0's GI 1 CI 0 = %q", s)
	}
	if s := (MIGCap{2, 7, -1}).String(); s != "gpu2/gi7/access" {
		t.Errorf("name of GPU 2's GI 7 = %q", s)
	}
}

// TestParseMIGMinors_Refuses: input that is not the driver's table is
// an error naming what is wrong, never a partial table.
func TestParseMIGMinors_Refuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"three fields", "gpu0/gi1/access 12 13\n", "line 1"},
		{"one field", "config 1\ngpu0/gi1/access\n", "line 2"},
		{"minor not a number", "gpu0/gi1/access x\n", `minor number "x"`},
		{"negative minor", "gpu0/gi1/access -3\n", `minor number "-3"`},
		{"minor past 20 bits", "gpu0/gi1/access 1048576\n", "1048576"},
		{"listed twice", "gpu0/gi1/access 12\ngpu0/gi1/access 15\n", "listed twice"},
		{"two caps on one minor", "gpu0/gi1/access 12\ngpu0/gi2/access 12\n", "minor 12 listed for both"},
		{"a line too long", "gpu0/gi1/access 12\n" + strings.Repeat("x", 300) + " 1\n", "longer than"},
		{"too large", strings.Repeat("\n", maxMIGMinorsBytes+1), "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMIGMinors(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseMIGMinors = %v, %v; want an error with %q", got, err, tc.want)
			}
		})
	}
	// Names of other forms are other capabilities, skipped.
	got, err := ParseMIGMinors(strings.NewReader("gpu0/gi+1/access 3\ngpu0/gi1/ci0/x 4\ngpux/gi1/access 5\nfabric-mgmt 6\n\n"))
	if err != nil || len(got) != 0 {
		t.Errorf("ParseMIGMinors of other capabilities = %v, %v; want none, no error", got, err)
	}
}

// FuzzParseMIGMinors: whatever the file holds, the parser returns a
// table or an error, and a table it returns maps capabilities it can
// name back to the minors their lines gave, one capability a minor.
func FuzzParseMIGMinors(f *testing.F) {
	f.Add(driverTable)
	f.Add("gpu0/gi1/access 12\ngpu0/gi1/access 12\n")
	f.Add("gpu99999999999999999999/gi1/access 1\n")
	f.Add("gpu0/gi1/ci0/access 1048575\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		tab, err := ParseMIGMinors(strings.NewReader(in))
		if err != nil {
			return
		}
		seen := map[uint32]MIGCap{}
		for c, m := range tab {
			if m > maxMinor || c.GPU < 0 || c.GI < 0 || c.CI < -1 {
				t.Fatalf("%+v → %d out of range", c, m)
			}
			if other, dup := seen[m]; dup {
				t.Fatalf("minor %d for both %s and %s", m, c, other)
			}
			seen[m] = c
			if !strings.Contains(in, c.String()) {
				t.Fatalf("%s is in the table, not in the input", c)
			}
		}
	})
}

// freeCharMajor is a character device major no driver of this machine
// has (from the local and experimental range 240-254): a node made with
// it opens to ENXIO where the cgroup allows it, as a GPU's does without a
// driver behind it.
func freeCharMajor(t *testing.T) uint32 {
	t.Helper()
	f, err := os.Open("/proc/devices")
	if err != nil {
		t.Skip("no /proc/devices: ", err)
	}
	defer func() { _ = f.Close() }()
	used := map[uint32]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == "Block devices:" {
			break
		}
		if n, err := strconv.ParseUint(strings.Fields(sc.Text() + " x")[0], 10, 32); err == nil {
			used[uint32(n)] = true
		}
	}
	for m := uint32(240); m <= 254; m++ {
		if !used[m] {
			return m
		}
	}
	t.Skip("no free character major in 240-254")
	return 0
}

// TestMIGCapDevices: caps are found by the table's minors and stat'ed;
// a cap the table lacks, a missing node, a node of another minor and
// nodes of two majors are each refused with the cap named.
func TestMIGCapDevices(t *testing.T) {
	t.Parallel()
	needRoot(t)
	major := freeCharMajor(t)
	dir := t.TempDir()
	mknodGPUs(t, dir, map[string]Device{"nvidia-cap12": {major, 12}, "nvidia-cap13": {major, 13},
		"nvidia-cap14": {major, 15}, "nvidia-cap3": {major + 1, 3}})
	tab, err := ParseMIGMinors(strings.NewReader(driverTable))
	if err != nil {
		t.Fatal(err)
	}
	got, err := MIGCapDevices(tab, dir, []MIGCap{{0, 1, -1}, {0, 1, 0}})
	if want := []Device{{major, 12}, {major, 13}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("MIGCapDevices = %v, %v; want %v", got, err, want)
	}
	for _, tc := range []struct {
		caps []MIGCap
		want string
	}{
		{[]MIGCap{{0, 9, -1}}, "has no gpu0/gi9/access"},
		{[]MIGCap{{1, 1, -1}}, "nvidia-cap147 (the node of gpu1/gi1/access)"},
		{[]MIGCap{{0, 1, 1}}, fmt.Sprintf("is c %d:15, and the driver's table gives gpu0/gi1/ci1/access minor 14", major)},
		{[]MIGCap{{0, 1, -1}, {0, 0, -1}}, "another MIG capability node major"},
	} {
		if got, err := MIGCapDevices(tab, dir, tc.caps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MIGCapDevices(%v) = %v, %v; want an error with %q", tc.caps, got, err, tc.want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "nvidia-cap4"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MIGCapDevices(tab, dir, []MIGCap{{0, 0, 0}}); err == nil || !strings.Contains(err.Error(), "not a character device") {
		t.Errorf("a regular file for a cap node: %v, want it refused", err)
	}
}

// TestDeviceRulesDenyOtherMIGInstances runs a process in the cgroup of
// an attempt given one of two MIG instances of one GPU and has it open
// the GPU's node and both instances' capability nodes: its own open
// (ENXIO, no driver behind the fake nodes), the other's are refused
// (EPERM), on each hierarchy.
func TestDeviceRulesDenyOtherMIGInstances(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		if !m.Support().Devices {
			t.Skip(m.Support().DevicesOff)
		}
		major := freeCharMajor(t)
		dir := t.TempDir()
		mknodGPUs(t, dir, map[string]Device{"nvidia0": {NvidiaMajor, 0},
			"nvidia-caps/nvidia-cap12": {major, 12}, "nvidia-caps/nvidia-cap13": {major, 13},
			"nvidia-caps/nvidia-cap147": {major, 147}, "nvidia-caps/nvidia-cap148": {major, 148}})
		tab := MIGMinors{{0, 1, -1}: 12, {0, 1, 0}: 13, {0, 2, -1}: 147, {0, 2, 0}: 148}
		var gpus [][]Device
		for _, gi := range []int{1, 2} {
			caps, err := MIGCapDevices(tab, filepath.Join(dir, "nvidia-caps"), []MIGCap{{0, gi, -1}, {0, gi, 0}})
			if err != nil {
				t.Fatal(err)
			}
			gpus = append(gpus, append([]Device{{NvidiaMajor, 0}}, caps...))
		}
		open := `for d in nvidia0 nvidia-caps/nvidia-cap12 nvidia-caps/nvidia-cap13 nvidia-caps/nvidia-cap147 nvidia-caps/nvidia-cap148; do ` +
			`echo "$d $( (: < ` + dir + `/$d) 2>&1 )"; done`
		const reached, refused = "No such device or address", "Operation not permitted"
		for own, want := range map[int][]string{0: {reached, reached, reached, refused, refused},
			1: {reached, refused, refused, reached, reached}} {
			cg := newCgroup(t, m, "job-21-"+strconv.Itoa(own), Limits{DenyDevices: DenyOthers(gpus, []int{own})})
			j := startJob(t, cg, open)
			for _, w := range want {
				if got := j.line(t); !strings.HasSuffix(got, w) {
					t.Errorf("%s: a job holding MIG instance %d: %q, want %q", m.Support().Version, own, got, w)
				}
			}
		}
	})
}
