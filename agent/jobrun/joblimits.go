package jobrun

import (
	"fmt"
	"os"

	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// procOneLimits is where the system's default limits are read from.
const procOneLimits = "/proc/1/limits"

// jobLimitsFor is the limits every job process starts with: the system's
// defaults (jobexec.SystemLimits of PID 1's limits), with the site's
// --job-rlimit values on top. Not the agent's own limits: an agent started
// with a raised nofile, root's nproc or an administrator's tuning would
// otherwise hand them to every job. Without PID 1's limits (an unusual
// /proc) only the site's values and the open-files default apply.
func jobLimitsFor(site []jobexec.Rlimit, procLimits string, readErr error) ([]jobexec.Rlimit, error) {
	if readErr != nil {
		return jobexec.MergeLimits([]jobexec.Rlimit{{Resource: "nofile", Cur: jobexec.DefaultNofileSoft, Max: jobexec.DefaultNofileSoft}}, site),
			fmt.Errorf("read the system's default limits from %s: %w", procOneLimits, readErr)
	}
	base, err := jobexec.SystemLimits(procLimits)
	if err != nil {
		return jobexec.MergeLimits(nil, site), fmt.Errorf("parse %s: %w", procOneLimits, err)
	}
	return jobexec.MergeLimits(base, site), nil
}

func (n *Node) initJobLimits() {
	b, err := os.ReadFile(procOneLimits)
	limits, err := jobLimitsFor(n.cfg.JobLimits, string(b), err)
	if err != nil {
		n.log.Warn("job limits: the system's defaults are unknown", "err", err)
	}
	n.jobLimits = limits
}
