package confine

import (
	"fmt"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Device is a character device by its numbers, as the kernel checks an
// open against a cgroup's device rules: the rules match numbers, not
// paths, so a job that makes its own node for a device is held too.
type Device struct {
	Major, Minor uint32
}

// Majors of the GPU device nodes the agent binds.
const (
	// NvidiaMajor is /dev/nvidia0, /dev/nvidia1, ... (minor = the
	// driver's GPU number); /dev/nvidiactl (195:255) is shared by every
	// CUDA process and never denied.
	NvidiaMajor = 195
	// DRMMajor is /dev/dri/card* and /dev/dri/renderD128+ (AMD, Intel).
	DRMMajor = 226
)

func (d Device) String() string { return fmt.Sprintf("c %d:%d", d.Major, d.Minor) }

// DenyOthers is which device nodes an attempt may not open: those of
// every GPU of gpus, which holds the nodes each of the node's GPUs needs
// by index, whose index is not in own, but for the nodes a GPU in own
// needs too. A whole GPU needs its own node; a MIG instance its GPU's
// node, which every instance of that GPU shares, and its capability
// nodes (MIGCapDevices), which only an instance of the same GPU instance
// shares. An attempt that holds none is denied all of them, as its
// CUDA_VISIBLE_DEVICES is empty: a job that asked for no GPU must not take
// one from a job that did. Indices in own past the end of gpus are ignored.
func DenyOthers(gpus [][]Device, own []int) []Device {
	var keep []Device
	for _, i := range own {
		if i >= 0 && i < len(gpus) {
			keep = append(keep, gpus[i]...)
		}
	}
	var deny []Device
	for i, nodes := range gpus {
		if slices.Contains(own, i) {
			continue
		}
		for _, d := range nodes {
			if !slices.Contains(keep, d) && !slices.Contains(deny, d) {
				deny = append(deny, d)
			}
		}
	}
	return deny
}

// denyRules are the OCI device rules of a deny list: on v1 each is one
// line written to devices.deny, below a parent that allows everything.
func denyRules(deny []Device) []specs.LinuxDeviceCgroup {
	rules := make([]specs.LinuxDeviceCgroup, 0, len(deny))
	for _, d := range deny {
		major, minor := int64(d.Major), int64(d.Minor)
		rules = append(rules, specs.LinuxDeviceCgroup{Allow: false, Type: "c", Major: &major, Minor: &minor, Access: "rwm"})
	}
	return rules
}

// filterRules are the rules of a v2 device program, which allows nothing
// it is not told to: everything, then the deny list. The program tries
// the rules from the last to the first and the first that matches
// decides, so a denied device is refused and every other one allowed
// (subject to the programs of the cgroups above, which the kernel runs too).
func filterRules(deny []Device) []specs.LinuxDeviceCgroup {
	wild := int64(-1)
	all := specs.LinuxDeviceCgroup{Allow: true, Type: "a", Major: &wild, Minor: &wild, Access: "rwm"}
	return append([]specs.LinuxDeviceCgroup{all}, denyRules(deny)...)
}
