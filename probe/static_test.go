package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/shoal-hpc/shoal/nodestate"
)

type fakeInventory struct {
	st  nodestate.Static
	err error
}

func (f fakeInventory) HostStatic(context.Context) (nodestate.Static, error) { return f.st, f.err }

var labHost = nodestate.Static{Hostname: "lab07", CPUModel: "AMD EPYC 7302", Cores: 16, Threads: 32, MHz: 3000, MemTotal: 128 << 30}

func TestScanStatic_FakedGPUs_NoGPUOnThisMachine(t *testing.T) {
	t.Parallel()
	cpu := nodestate.PE{Kind: "cpu", Model: "AMD EPYC 7302", Count: 16, MemBytes: 128 << 30}
	a100 := []byte("NVIDIA A100-SXM4-40GB, 40960\nNVIDIA A100-SXM4-40GB, 40960\n")
	nvCard := map[string]string{"vendor": "0x10de", "device": "0x20b0"}
	amdCard := map[string]string{"vendor": "0x1002", "device": "0x740f"}
	tests := []struct {
		name     string
		nvml     *FakeNVML // nil: FakeNVMLMissing, a node without the NVIDIA driver
		runner   *replayRunner
		cards    map[string]map[string]string
		declared []nodestate.PE
		want     []nodestate.PE
		wantGPUs int
		warn     string
		info     string
		smiRun   bool
	}{
		{name: "CPU only: no driver, one line saying so", runner: &replayRunner{err: fmt.Errorf("x: %w", ErrToolMissing)},
			want: []nodestate.PE{cpu}, info: "no NVIDIA GPUs: no NVIDIA driver here", smiRun: true},
		{name: "NVML GPUs, nvidia-smi not asked, not counted again from sysfs", nvml: FakeNVMLTwoGPUs(),
			runner: &replayRunner{out: a100},
			cards:  map[string]map[string]string{"card0": nvCard, "card1": nvCard, "card2": amdCard},
			want: []nodestate.PE{cpu, {Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 2, MemBytes: 40 << 30},
				{Kind: "gpu", Model: "AMD [1002:740f]", Count: 1}},
			wantGPUs: 3, info: "NVIDIA GPUs found through NVML"},
		{name: "NVML MIG instances are the node's GPUs", nvml: FakeNVMLMIG(), runner: &replayRunner{out: a100},
			cards: map[string]map[string]string{"card0": nvCard, "card1": nvCard},
			want: []nodestate.PE{cpu, {Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB MIG 3g.20gb", Count: 1, MemBytes: 20 << 30},
				{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB MIG 1g.5gb", Count: 2, MemBytes: 5 << 30},
				{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 1, MemBytes: 40 << 30}},
			wantGPUs: 4, info: "mig_instances=3"},
		{name: "NVML does not start: nvidia-smi's GPUs, warning logged", nvml: FakeNVMLInitFails(),
			runner:   &replayRunner{out: a100},
			cards:    map[string]map[string]string{"card0": nvCard, "card1": nvCard},
			want:     []nodestate.PE{cpu, {Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 2, MemBytes: 40960 << 20}},
			wantGPUs: 2, warn: "NVML failed; asking nvidia-smi", smiRun: true},
		{name: "no NVML library, nvidia-smi there: its GPUs", runner: &replayRunner{out: a100},
			want:     []nodestate.PE{cpu, {Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 2, MemBytes: 40960 << 20}},
			wantGPUs: 2, info: "NVIDIA GPUs found through nvidia-smi", smiRun: true},
		{name: "nvidia-smi broken: sysfs still sees the card, warning logged",
			runner:   &replayRunner{err: errors.New("exit status 9 (NVIDIA-SMI has failed)")},
			cards:    map[string]map[string]string{"card0": nvCard},
			want:     []nodestate.PE{cpu, {Kind: "gpu", Model: "NVIDIA [10de:20b0]", Count: 1}},
			wantGPUs: 1, warn: "nvidia-smi failed", smiRun: true},
		{name: "NVML's only GPU in MIG mode without instances: no GPU, not the card whole from sysfs",
			nvml: &FakeNVML{GPUs: []FakeNVMLDevice{{UUIDv: "GPU-empty", NameV: "NVIDIA H100 80GB HBM3", Mem: 80 << 30,
				MIGOn: true, MIGSlots: make([]*FakeNVMLDevice, 7)}}},
			runner: &replayRunner{out: a100}, cards: map[string]map[string]string{"card0": nvCard},
			want: []nodestate.PE{cpu}, warn: "holds no MIG instance"},
		{name: "declared FPGA", runner: &replayRunner{err: ErrToolMissing}, declared: []nodestate.PE{{Kind: "fpga", Count: 2}},
			want: []nodestate.PE{cpu, {Kind: "fpga", Count: 2}}, smiRun: true},
		{name: "declared GPUs replace NVML's devices", nvml: FakeNVMLTwoGPUs(), runner: &replayRunner{},
			declared: []nodestate.PE{{Kind: "gpu", Count: 3}}, want: []nodestate.PE{cpu, {Kind: "gpu", Count: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sys := fstest.MapFS{}
			for card, files := range tt.cards {
				sysCard(sys, card, files)
			}
			var logs bytes.Buffer
			lib := tt.nvml
			if lib == nil {
				lib = FakeNVMLMissing()
			}
			cfg := StaticConfig{
				Host: fakeInventory{st: labHost}, NVML: lib, Runner: tt.runner, SysFS: sys, Declared: tt.declared,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			}
			got, err := ScanStatic(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got.Hostname != "lab07" || got.Cores != 16 || got.Threads != 32 {
				t.Errorf("host facts lost: %+v", got)
			}
			if !reflect.DeepEqual(got.PEs, tt.want) {
				t.Errorf("PEs = %+v\nwant %+v", got.PEs, tt.want)
			}
			if len(got.GPUs) != tt.wantGPUs {
				t.Errorf("%d GPU devices %+v, want %d", len(got.GPUs), got.GPUs, tt.wantGPUs)
			}
			if tt.warn == "" && strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("unexpected warning: %s", logs.String())
			}
			for _, want := range []string{tt.warn, tt.info} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log %q lacks %q", logs.String(), want)
				}
			}
			if ran := tt.runner.args != nil; ran != tt.smiRun {
				t.Errorf("nvidia-smi run: %v, want %v", ran, tt.smiRun)
			}
			if lib.Inits > 0 && lib.InitErr == nil && lib.Shutdowns != lib.Inits {
				t.Errorf("NVML initialised %d times, shut down %d", lib.Inits, lib.Shutdowns)
			}
		})
	}
}

func TestScanStatic_HostFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	_, err := ScanStatic(context.Background(), StaticConfig{Host: fakeInventory{err: boom}, Runner: &replayRunner{}, SysFS: fstest.MapFS{}})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want wrapped boom", err)
	}
}

// TestScanStatic_ThisMachine runs the real gopsutil inventory, nvidia-smi
// lookup and /sys scan. This machine has no GPU, so only the CPU PE is
// expected unless one is really present.
func TestScanStatic_ThisMachine(t *testing.T) {
	t.Parallel()
	st, err := ScanStatic(context.Background(), StaticConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Hostname == "" || st.Cores <= 0 || st.Threads < st.Cores || st.MemTotal == 0 {
		t.Errorf("implausible static state: %+v", st)
	}
	if len(st.PEs) == 0 || st.PEs[0].Kind != "cpu" || st.PEs[0].Count != st.Cores {
		t.Errorf("first PE is not the CPU: %+v", st.PEs)
	}
	t.Logf("this machine: %+v", st)
}
