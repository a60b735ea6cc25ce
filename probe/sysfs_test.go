package probe

import (
	"errors"
	"io/fs"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/shoal-hpc/shoal/nodestate"
)

// sysCard adds one DRM card to a /sys fixture.
func sysCard(fsys fstest.MapFS, card string, files map[string]string) {
	fsys["class/drm/"+card+"/dev"] = &fstest.MapFile{Data: []byte("226:0\n")}
	for name, data := range files {
		fsys["class/drm/"+card+"/device/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
}

// This machine has no /sys/class/drm at all; the fixtures below mirror
// what amdgpu, i915, nvidia and a server BMC expose.
func TestScanDRM_Fixtures_NoGPUOnThisMachine(t *testing.T) {
	t.Parallel()
	mi := map[string]string{"vendor": "0x1002\n", "device": "0x740f\n", "mem_info_vram_total": "68702699520\n"}
	tests := []struct {
		name  string
		build func(fstest.MapFS)
		want  []nodestate.PE
	}{
		{name: "no class/drm", build: func(fstest.MapFS) {}, want: nil},
		{name: "two AMD MI210 with connectors", build: func(f fstest.MapFS) {
			sysCard(f, "card0", mi)
			sysCard(f, "card1", mi)
			f["class/drm/card0-DP-1/status"] = &fstest.MapFile{Data: []byte("connected\n")}
			f["class/drm/renderD128/dev"] = &fstest.MapFile{Data: []byte("226:128\n")}
		}, want: []nodestate.PE{{Kind: "gpu", Model: "AMD [1002:740f]", Count: 2, MemBytes: 68702699520}}},
		{name: "AMD product name", build: func(f fstest.MapFS) {
			sysCard(f, "card0", map[string]string{"vendor": "0x1002", "device": "0x73bf", "product_name": "Radeon RX 6900 XT\n"})
		}, want: []nodestate.PE{{Kind: "gpu", Model: "AMD Radeon RX 6900 XT", Count: 1}}},
		{name: "Intel iGPU and NVIDIA", build: func(f fstest.MapFS) {
			sysCard(f, "card0", map[string]string{"vendor": "0x8086\n", "device": "0x4680\n"})
			sysCard(f, "card1", map[string]string{"vendor": "0x10de\n", "device": "0x2204\n"})
		}, want: []nodestate.PE{
			{Kind: "gpu", Model: "Intel [8086:4680]", Count: 1},
			{Kind: "gpu", Model: "NVIDIA [10de:2204]", Count: 1},
		}},
		{name: "server BMC and virtual display are not PEs", build: func(f fstest.MapFS) {
			sysCard(f, "card0", map[string]string{"vendor": "0x1a03\n", "device": "0x2000\n"}) // ASPEED
			sysCard(f, "card1", map[string]string{"vendor": "0x1af4\n", "device": "0x1050\n"}) // virtio-gpu
		}, want: nil},
		{name: "simpledrm without PCI vendor", build: func(f fstest.MapFS) {
			sysCard(f, "card0", map[string]string{"modalias": "platform:simple-framebuffer\n"})
		}, want: nil},
		{name: "garbled vendor skipped", build: func(f fstest.MapFS) {
			sysCard(f, "card0", map[string]string{"vendor": "zzz\n"})
		}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := fstest.MapFS{}
			tt.build(f)
			got, err := ScanDRM(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

type errFS struct{ err error }

func (e errFS) Open(string) (fs.File, error) { return nil, e.err }

func TestScanDRM_UnreadableSysfs(t *testing.T) {
	t.Parallel()
	_, err := ScanDRM(errFS{fs.ErrPermission})
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("err = %v, want wrapped ErrPermission", err)
	}
}
