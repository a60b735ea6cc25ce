package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/nodestate"
)

// drmVendors are the PCI vendors whose display devices are compute PEs.
// Others that show up under class/drm are server BMC framebuffers (ASPEED,
// Matrox) or virtual displays (QEMU, virtio, VMware) that run no kernels,
// so counting them would send GPU jobs to machines without a GPU.
var drmVendors = map[uint64]string{
	0x1002: "AMD",
	0x10de: "NVIDIA",
	0x8086: "Intel",
}

const pciVendorNVIDIA = 0x10de

// cardName matches DRM device nodes ("card0") but not their connectors
// ("card0-DP-1"), which would count one GPU many times.
var cardName = regexp.MustCompile(`^card[0-9]+$`)

// drmCard is one DRM card before grouping; the vendor is kept so that
// ScanStatic can drop NVIDIA cards that nvidia-smi already reported.
type drmCard struct {
	vendor uint64
	pe     nodestate.PE
}

// ScanDRM finds GPUs under class/drm in fsys, which is rooted at /sys
// (os.DirFS("/sys") on a node, an fstest.MapFS in tests). It reads each
// card's device/vendor and device/device ids and, where the driver exposes
// it (amdgpu), device/mem_info_vram_total. Identical cards are grouped.
// A machine without class/drm has no GPUs and returns nil, nil.
func ScanDRM(fsys fs.FS) ([]nodestate.PE, error) {
	cards, err := scanDRMCards(fsys)
	if err != nil {
		return nil, err
	}
	pes := make([]nodestate.PE, 0, len(cards))
	for _, c := range cards {
		pes = append(pes, c.pe)
	}
	return groupPEs(pes), nil
}

func scanDRMCards(fsys fs.FS) ([]drmCard, error) {
	const dir = "class/drm"
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read /sys/%s: %w", dir, err)
	}
	var cards []drmCard
	for _, e := range entries { // ReadDir sorts by name: stable order
		if !cardName.MatchString(e.Name()) {
			continue
		}
		dev := path.Join(dir, e.Name(), "device")
		vendor, err := readHex(fsys, path.Join(dev, "vendor"))
		if err != nil {
			// simpledrm and other non-PCI cards have no vendor file.
			continue
		}
		vname, ok := drmVendors[vendor]
		if !ok {
			continue
		}
		device, _ := readHex(fsys, path.Join(dev, "device"))
		model := fmt.Sprintf("%s [%04x:%04x]", vname, vendor, device)
		if name := readTrim(fsys, path.Join(dev, "product_name")); name != "" {
			model = vname + " " + name
		}
		var mem uint64
		if s := readTrim(fsys, path.Join(dev, "mem_info_vram_total")); s != "" {
			mem, _ = strconv.ParseUint(s, 10, 64)
		}
		cards = append(cards, drmCard{vendor: vendor, pe: nodestate.PE{Kind: "gpu", Model: model, Count: 1, MemBytes: mem}})
	}
	return cards, nil
}

func readTrim(fsys fs.FS, name string) string {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readHex reads a sysfs id such as "0x10de\n".
func readHex(fsys fs.FS, name string) (uint64, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, fmt.Errorf("read /sys/%s: %w", name, err)
	}
	s := strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("parse /sys/%s: %w", name, err)
	}
	return v, nil
}
