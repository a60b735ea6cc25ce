package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/nodestate"
)

// Runner runs an external command and returns its standard output. It is
// the boundary between the inventory and the machine, so tests replay
// recorded nvidia-smi output instead of needing a GPU.
type Runner interface {
	// Run returns ErrToolMissing (wrapped) when name is not installed.
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs commands with os/exec.
type ExecRunner struct{}

var _ Runner = ExecRunner{}

// Run implements Runner.
func (ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w: %w", name, ErrToolMissing, err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// nvidia-smi explains a missing driver on stdout or stderr; keep
		// its first line so the log says why, not just "exit status 9".
		msg := firstLine(stderr.Bytes())
		if msg == "" {
			msg = firstLine(out)
		}
		return nil, fmt.Errorf("run %s: %w (%s)", name, err, msg)
	}
	return out, nil
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	return string(line)
}

// nvidiaSMIArgs ask for one CSV line per GPU, memory in MiB without units.
var nvidiaSMIArgs = []string{"--query-gpu=name,memory.total", "--format=csv,noheader,nounits"}

// ScanNvidia runs nvidia-smi through r. A missing nvidia-smi is not an
// error: it returns no PEs and an error matching ErrToolMissing, which
// callers treat as "no NVIDIA GPUs here".
func ScanNvidia(ctx context.Context, r Runner, name string) ([]nodestate.PE, error) {
	devs, err := scanNvidiaSMI(ctx, r, name)
	if err != nil {
		return nil, err
	}
	return gpuPEs(devs), nil
}

// scanNvidiaSMI is ScanNvidia's device list, one entry per GPU in
// nvidia-smi's order.
func scanNvidiaSMI(ctx context.Context, r Runner, name string) ([]GPUDevice, error) {
	out, err := r.Run(ctx, name, nvidiaSMIArgs...)
	if err != nil {
		return nil, err
	}
	return parseNvidiaSMIDevices(out)
}

// ParseNvidiaSMI parses the output of
// `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits`
// and groups identical models into one PE with a count. Memory reported as
// "[N/A]" (some MIG and virtual GPUs) is kept as 0, meaning unknown.
func ParseNvidiaSMI(out []byte) ([]nodestate.PE, error) {
	devs, err := parseNvidiaSMIDevices(out)
	if err != nil {
		return nil, err
	}
	return gpuPEs(devs), nil
}

// parseNvidiaSMIDevices is ParseNvidiaSMI before grouping.
func parseNvidiaSMIDevices(out []byte) ([]GPUDevice, error) {
	var gpus []GPUDevice
	sc := bufio.NewScanner(bytes.NewReader(out))
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		// Split at the last comma: a model name could hold a comma, the
		// memory figure cannot.
		i := strings.LastIndexByte(line, ',')
		if i < 0 {
			return nil, fmt.Errorf("line %d %q: want \"NAME, MEMORY_MIB\": %w", lineNo, line, ErrNvidiaSMI)
		}
		model := strings.TrimSpace(line[:i])
		memField := strings.TrimSpace(line[i+1:])
		if model == "" {
			return nil, fmt.Errorf("line %d %q: empty GPU name: %w", lineNo, line, ErrNvidiaSMI)
		}
		var mem uint64
		if !strings.HasPrefix(memField, "[") { // "[N/A]", "[Not Supported]"
			mib, err := strconv.ParseUint(memField, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d %q: memory %q is not MiB: %w", lineNo, line, memField, errors.Join(ErrNvidiaSMI, err))
			}
			mem = mib << 20
		}
		gpus = append(gpus, GPUDevice{Model: model, MemBytes: mem, Minor: -1, GI: -1, CI: -1, Source: "nvidia-smi"})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read nvidia-smi output: %w", err)
	}
	return gpus, nil
}
