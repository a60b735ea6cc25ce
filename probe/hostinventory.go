package probe

import (
	"context"
	"fmt"
	"os"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/host"
	"github.com/shirou/gopsutil/v3/mem"
	"github.com/shoal-hpc/shoal/nodestate"
)

// GopsutilInventory reads the host facts with gopsutil.
type GopsutilInventory struct{}

var _ HostInventory = GopsutilInventory{}

// HostStatic implements HostInventory.
func (GopsutilInventory) HostStatic(ctx context.Context) (nodestate.Static, error) {
	var st nodestate.Static
	if info, err := host.InfoWithContext(ctx); err == nil && info.Hostname != "" {
		st.Hostname = info.Hostname
	} else if st.Hostname, err = os.Hostname(); err != nil {
		return nodestate.Static{}, fmt.Errorf("hostname: %w", err)
	}
	threads, err := cpu.CountsWithContext(ctx, true)
	if err != nil {
		return nodestate.Static{}, fmt.Errorf("count logical CPUs: %w", err)
	}
	cores, err := cpu.CountsWithContext(ctx, false)
	if err != nil || cores <= 0 {
		// Some containers and VMs hide the core topology; one core per
		// logical CPU is the honest lower-information answer.
		cores = threads
	}
	st.Threads, st.Cores = threads, cores
	infos, err := cpu.InfoWithContext(ctx)
	if err != nil {
		return nodestate.Static{}, fmt.Errorf("read CPU info: %w", err)
	}
	st.CPUModel, st.MHz = cpuModelAndMHz(infos)
	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return nodestate.Static{}, fmt.Errorf("read memory: %w", err)
	}
	st.MemTotal = vm.Total
	return st, nil
}

// cpuModelAndMHz takes the model of the first CPU and the highest clock
// among all of them: gopsutil reports cpufreq's max where it can, but
// falls back to the current clock per CPU, which varies with load.
func cpuModelAndMHz(infos []cpu.InfoStat) (string, float64) {
	var model string
	var mhz float64
	for _, in := range infos {
		if model == "" {
			model = in.ModelName
		}
		mhz = max(mhz, in.Mhz)
	}
	return model, mhz
}
