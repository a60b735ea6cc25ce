package probe

import (
	"errors"
	"reflect"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
)

func TestParsePEFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    nodestate.PE
		wantErr string
	}{
		{in: "fpga=2", want: nodestate.PE{Kind: "fpga", Count: 2}},
		{in: "FPGA=1", want: nodestate.PE{Kind: "fpga", Count: 1}},
		{in: " vector-engine = 8 ", want: nodestate.PE{Kind: "vector-engine", Count: 8}},
		{in: "tpu_v4=4", want: nodestate.PE{Kind: "tpu_v4", Count: 4}},
		{in: "fpga=x", wantErr: `--pe "fpga=x": count must be a positive integer, e.g. --pe fpga=2`},
		{in: "fpga=0", wantErr: `--pe "fpga=0": count must be a positive integer, e.g. --pe fpga=2`},
		{in: "fpga=-1", wantErr: `--pe "fpga=-1": count must be a positive integer, e.g. --pe fpga=2`},
		{in: "fpga", wantErr: `--pe "fpga": want KIND=COUNT, e.g. --pe fpga=2`},
		{in: "fpga:2", wantErr: `--pe "fpga:2": want KIND=COUNT, e.g. --pe fpga=2`},
		{in: "=2", wantErr: `--pe "=2": kind is empty, e.g. --pe fpga=2`},
		{in: "fp ga=2", wantErr: `--pe "fp ga=2": kind may hold only letters, digits, '-' and '_', e.g. --pe fpga=2`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePEFlag(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParsePEFlag(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				if !errors.Is(err, ErrBadPEFlag) {
					t.Errorf("error %v does not match ErrBadPEFlag", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParsePEFlag(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParsePEFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      []string
		want    []nodestate.PE
		wantErr bool
	}{
		{name: "none", in: nil, want: []nodestate.PE{}},
		{name: "two kinds", in: []string{"fpga=2", "dsp=1"}, want: []nodestate.PE{{Kind: "fpga", Count: 2}, {Kind: "dsp", Count: 1}}},
		{name: "kind twice", in: []string{"fpga=2", "FPGA=1"}, wantErr: true},
		{name: "one bad", in: []string{"fpga=2", "dsp"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePEFlags(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrBadPEFlag) {
					t.Errorf("error %v does not match ErrBadPEFlag", err)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMergePEs(t *testing.T) {
	t.Parallel()
	cpu := nodestate.PE{Kind: "cpu", Model: "Xeon", Count: 16, MemBytes: 64 << 30}
	a100 := nodestate.PE{Kind: "gpu", Model: "NVIDIA A100", Count: 1, MemBytes: 40 << 30}
	mi := nodestate.PE{Kind: "gpu", Model: "AMD [1002:740f]", Count: 1}
	tests := []struct {
		name               string
		detected, declared []nodestate.PE
		want               []nodestate.PE
	}{
		{name: "cpu only", want: []nodestate.PE{cpu}},
		{name: "identical GPUs grouped", detected: []nodestate.PE{a100, mi, a100},
			want: []nodestate.PE{cpu, {Kind: "gpu", Model: "NVIDIA A100", Count: 2, MemBytes: 40 << 30}, mi}},
		{name: "declared added", detected: []nodestate.PE{a100}, declared: []nodestate.PE{{Kind: "fpga", Count: 2}},
			want: []nodestate.PE{cpu, a100, {Kind: "fpga", Count: 2}}},
		{name: "declared kind replaces detected", detected: []nodestate.PE{a100, mi}, declared: []nodestate.PE{{Kind: "gpu", Count: 1}},
			want: []nodestate.PE{cpu, {Kind: "gpu", Count: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := MergePEs(cpu, tt.detected, tt.declared)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("MergePEs = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
