package agent

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/probe"
	"golang.org/x/sys/unix"
)

// The exported names of this file are shared with the package's
// external tests, which run whole agents on these fake nodes.

// MIGTable is the driver's MIG capability table for probe.FakeNVMLMIG's
// instances (GPU 0: GPU instances 1, 9 and 10, compute instance 0 of
// each), as the driver writes it, cut short.
const MIGTable = `config 1
monitor 2
gpu0/gi1/access 12
gpu0/gi1/ci0/access 13
gpu0/gi9/access 84
gpu0/gi9/ci0/access 85
gpu0/gi10/access 93
gpu0/gi10/ci0/access 94
gpu1/gi1/access 147
gpu1/gi1/ci0/access 148
`

// MIGCapMinors are the capability minors of MIGTable's instances, in
// the order of the inventory: each instance's GPU instance, then compute
// instance.
var MIGCapMinors = [][2]uint32{{12, 13}, {84, 85}, {93, 94}}

// FreeCharMajor is a character device major no driver of this machine
// has (from the local and experimental range 240-254), for fake MIG
// capability nodes: opened where the cgroup allows, one fails with ENXIO,
// as a real one without its driver would.
func FreeCharMajor(t *testing.T) uint32 {
	t.Helper()
	f, err := os.Open("/proc/devices")
	if err != nil {
		t.Skip("no /proc/devices: ", err)
	}
	defer func() { _ = f.Close() }()
	used := map[uint32]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() && sc.Text() != "Block devices:" {
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

// FakeMIGDevDir makes, in a new directory, the device nodes of
// probe.FakeNVMLMIG's node with mknod (no driver behind them): nvidia0
// and nvidia1 and, in nvidia-caps, the capability nodes of MIGTable's
// instances with the given major. It returns the directory.
func FakeMIGDevDir(t *testing.T, capMajor uint32) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	dir := t.TempDir()
	mk := func(name string, major, minor uint32) {
		if err := unix.Mknod(filepath.Join(dir, name), unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor))); err != nil {
			t.Skipf("make a fake GPU device node: %v", err)
		}
	}
	mk("nvidia0", confine.NvidiaMajor, 0)
	mk("nvidia1", confine.NvidiaMajor, 1)
	if err := os.Mkdir(filepath.Join(dir, "nvidia-caps"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range MIGCapMinors {
		for _, minor := range m {
			mk("nvidia-caps/nvidia-cap"+strconv.FormatUint(uint64(minor), 10), capMajor, minor)
		}
	}
	return dir
}

// fakeMIGInventory is what the inventory finds through probe.FakeNVMLMIG.
func fakeMIGInventory(t *testing.T) []probe.GPUDevice {
	t.Helper()
	inv, err := probe.ScanNVML(probe.FakeNVMLMIG(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// TestGPUDeviceNodesWithMIG: on a node with MIG instances each instance
// needs its GPU's node and its two capability nodes, the whole GPU beside
// them its own node; every way the capability table or its nodes fail to
// match the inventory is an error saying what, which the agent logs as
// it binds GPUs by environment only.
func TestGPUDeviceNodesWithMIG(t *testing.T) {
	t.Parallel()
	major := FreeCharMajor(t)
	dev := FakeMIGDevDir(t, major)
	table := filepath.Join(t.TempDir(), "mig-minors")
	if err := os.WriteFile(table, []byte(MIGTable), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := fakeMIGInventory(t)
	nv := func(m uint32) confine.Device { return confine.Device{Major: confine.NvidiaMajor, Minor: m} }
	caps := func(i int) []confine.Device {
		return []confine.Device{nv(0), {Major: major, Minor: MIGCapMinors[i][0]}, {Major: major, Minor: MIGCapMinors[i][1]}}
	}
	got, err := gpuDeviceNodes(inv, len(inv), dev, table)
	if want := [][]confine.Device{caps(0), caps(1), caps(2), {nv(1)}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("gpuDeviceNodes = %v, %v\nwant %v", got, err, want)
	}
	// A third GPU, in MIG mode without instances, is in no device of the
	// inventory: its node follows, for every attempt to be denied.
	if err := unix.Mknod(filepath.Join(dev, "nvidia2"), unix.S_IFCHR|0o666, int(unix.Mkdev(confine.NvidiaMajor, 2))); err != nil {
		t.Fatal(err)
	}
	got, err = gpuDeviceNodes(inv, len(inv), dev, table)
	if want := [][]confine.Device{caps(0), caps(1), caps(2), {nv(1)}, {nv(2)}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("gpuDeviceNodes with a GPU outside the inventory = %v, %v\nwant %v", got, err, want)
	}
	if deny := confine.DenyOthers(got, []int{3}); !slices.Contains(deny, nv(2)) {
		t.Errorf("the attempt holding the whole GPU is denied %v, want GPU 2's node among them", deny)
	}

	write := func(content string) string {
		p := filepath.Join(t.TempDir(), "mig-minors")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noIDs := fakeMIGInventory(t)
	noIDs[1].GI, noIDs[1].CI = -1, -1
	otherMinor := t.TempDir()
	if err := os.Mkdir(filepath.Join(otherMinor, "nvidia-caps"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct {
		name  string
		minor uint32
	}{{"nvidia0", 0}, {"nvidia1", 1}, {"nvidia-caps/nvidia-cap12", 12}, {"nvidia-caps/nvidia-cap13", 13},
		{"nvidia-caps/nvidia-cap84", 84}, {"nvidia-caps/nvidia-cap85", 86}, {"nvidia-caps/nvidia-cap93", 93}, {"nvidia-caps/nvidia-cap94", 94}} {
		major := major
		if strings.HasPrefix(n.name, "nvidia") && !strings.Contains(n.name, "/") {
			major = confine.NvidiaMajor
		}
		if err := unix.Mknod(filepath.Join(otherMinor, n.name), unix.S_IFCHR|0o666, int(unix.Mkdev(major, n.minor))); err != nil {
			t.Fatal(err)
		}
	}
	bare := t.TempDir()
	for i := range 2 {
		if err := unix.Mknod(filepath.Join(bare, "nvidia"+strconv.Itoa(i)), unix.S_IFCHR|0o666, int(unix.Mkdev(confine.NvidiaMajor, uint32(i)))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, dev, table string
		inv              []probe.GPUDevice
		want             string
	}{
		{"no table", dev, filepath.Join(t.TempDir(), "absent"), inv, "MIG instances: the driver's MIG capability table: open "},
		{"a table without an instance", dev, write(strings.ReplaceAll(MIGTable, "gpu0/gi9/ci0/access", "gpu0/gi9/ci1/access")), inv,
			"has no gpu0/gi9/ci0/access"},
		{"a table naming a minor without its node", dev, write(strings.ReplaceAll(MIGTable, "access 84", "access 86")), inv,
			"nvidia-cap86 (the node of gpu0/gi9/access)"},
		{"a node of another minor than the table's", otherMinor, table, inv,
			fmt.Sprintf("nvidia-cap85 is c %d:86, and the driver's table gives gpu0/gi9/ci0/access minor 85", major)},
		{"a table that is not the driver's", dev, write("gpu0/gi1/access 12 13\n"), inv, "line 1"},
		{"an instance without IDs", dev, table, noIDs, "MIG instance 1 (MIG-fake0000-0000-0000-0000-000000000002): NVML gave no"},
		{"an empty table", dev, write(""), inv, "has no gpu0/gi1/access"},
		{"no capability nodes", bare, table, inv, "nvidia-caps/nvidia-cap12 (the node of gpu0/gi1/access): no such file or directory (NVIDIA's tools make them on first use"},
	} {
		got, err := gpuDeviceNodes(tc.inv, len(tc.inv), tc.dev, tc.table)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: gpuDeviceNodes = %v, %v; want an error with %q", tc.name, got, err, tc.want)
		}
	}
}
