package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
)

// The machine that runs these tests has no GPU, so nvidia-smi's output is
// replayed from files recorded on GPU nodes.

func TestParseNvidiaSMI_RecordedOutput_NoGPUOnThisMachine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		want    []nodestate.PE
		wantErr bool
	}{
		{file: "nvidia-smi-a100x4.txt", want: []nodestate.PE{{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 4, MemBytes: 40960 << 20}}},
		{file: "nvidia-smi-mixed.txt", want: []nodestate.PE{
			{Kind: "gpu", Model: "NVIDIA GeForce RTX 3090", Count: 2, MemBytes: 24576 << 20},
			{Kind: "gpu", Model: "Tesla V100-PCIE-16GB", Count: 1, MemBytes: 16384 << 20},
		}},
		{file: "nvidia-smi-mig-na.txt", want: []nodestate.PE{{Kind: "gpu", Model: "NVIDIA H100 80GB HBM3", Count: 1}}},
		{file: "nvidia-smi-nodriver.txt", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			out, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseNvidiaSMI(out)
			if tt.wantErr {
				if !errors.Is(err, ErrNvidiaSMI) {
					t.Fatalf("err = %v, want ErrNvidiaSMI", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseNvidiaSMI_Malformed_NoGPUOnThisMachine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []nodestate.PE
		bad  bool
	}{
		{name: "empty output", in: "", want: nil},
		{name: "blank lines", in: "\n\n", want: nil},
		{name: "CRLF", in: "Tesla T4, 15360\r\n", want: []nodestate.PE{{Kind: "gpu", Model: "Tesla T4", Count: 1, MemBytes: 15360 << 20}}},
		{name: "no comma", in: "Tesla T4 15360\n", bad: true},
		{name: "units left on", in: "Tesla T4, 15360 MiB\n", bad: true},
		{name: "empty name", in: ", 15360\n", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseNvidiaSMI([]byte(tt.in))
			if tt.bad {
				if !errors.Is(err, ErrNvidiaSMI) {
					t.Fatalf("err = %v, want ErrNvidiaSMI", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// replayRunner plays back recorded command output.
type replayRunner struct {
	out  []byte
	err  error
	args []string
}

func (r *replayRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	r.args = append([]string{name}, args...)
	return r.out, r.err
}

func TestScanNvidia_ReplayedRunner_NoGPUOnThisMachine(t *testing.T) {
	t.Parallel()
	out, err := os.ReadFile("testdata/nvidia-smi-a100x4.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := &replayRunner{out: out}
	got, err := ScanNvidia(context.Background(), r, "nvidia-smi")
	if err != nil || len(got) != 1 || got[0].Count != 4 {
		t.Fatalf("ScanNvidia = %+v, %v", got, err)
	}
	wantArgs := []string{"nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"}
	if !reflect.DeepEqual(r.args, wantArgs) {
		t.Errorf("ran %q, want %q", r.args, wantArgs)
	}
}

func TestExecRunner_MissingTool(t *testing.T) {
	t.Parallel()
	_, err := ExecRunner{}.Run(context.Background(), "shoal-no-such-tool-xyz")
	if !errors.Is(err, ErrToolMissing) {
		t.Fatalf("err = %v, want ErrToolMissing", err)
	}
}

func TestExecRunner_FailureKeepsMessage(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh on this machine")
	}
	_, err := ExecRunner{}.Run(context.Background(), "sh", "-c", "echo 'driver not loaded' >&2; exit 9")
	if err == nil || errors.Is(err, ErrToolMissing) {
		t.Fatalf("err = %v, want a run failure", err)
	}
	if got := err.Error(); !strings.Contains(got, "driver not loaded") || !strings.Contains(got, "exit status 9") {
		t.Errorf("error %q lost the tool's message or status", got)
	}
}
