package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
)

// The Slurm commands' view of shoal's jobs and nodes: the states, times
// and field letters squeue, sacct and sinfo print, so that a script that
// parses `squeue -h -o "%i %T"` or `sacct --parsable2` reads shoal's
// answers as it read Slurm's. Pure: the clock is passed in.

// slurmState is the state Slurm would report for a job: its long name
// (squeue %T, sacct State) and its short one (squeue %t).
func slurmState(j api.Job) (long, short string) {
	switch j.State {
	case "queued", "placing":
		return "PENDING", "PD"
	case "launching":
		return "CONFIGURING", "CF"
	case "running":
		return "RUNNING", "R"
	case "done":
		return "COMPLETED", "CD"
	case "killed":
		return "CANCELLED", "CA"
	case "failed":
		if strings.Contains(j.Reason, "time limit") {
			return "TIMEOUT", "TO"
		}
		if strings.Contains(j.Reason, "out of memory") || strings.Contains(j.Reason, "memory limit") {
			return "OUT_OF_MEMORY", "OOM"
		}
		return "FAILED", "F"
	}
	return strings.ToUpper(j.State), strings.ToUpper(j.State)
}

// slurmLive says whether squeue lists the job by default: pending,
// starting or running, as Slurm's squeue lists jobs that have not ended.
func slurmLive(j api.Job) bool {
	switch j.State {
	case "queued", "placing", "launching", "running":
		return true
	}
	return false
}

// slurmStateMatches reads squeue/sacct's -t list: short or long names,
// any case, "all" for every state.
func slurmStateMatches(j api.Job, states []string) bool {
	long, short := slurmState(j)
	for _, s := range states {
		s = strings.ToUpper(strings.TrimSpace(s))
		if s == "ALL" || s == long || s == short {
			return true
		}
	}
	return false
}

// slurmDuration writes a duration as Slurm does: M:SS under an hour,
// H:MM:SS under a day, D-HH:MM:SS beyond.
func slurmDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	days, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}

// slurmElapsed is sacct's Elapsed: always [D-]HH:MM:SS.
func slurmElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	if days := s / 86400; days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, s/3600%24, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// slurmTimeLimit is a job's limit as squeue's %l and sacct's Timelimit
// print it; no limit is UNLIMITED.
func slurmTimeLimit(d time.Duration) string {
	if d <= 0 {
		return "UNLIMITED"
	}
	return slurmDuration(d)
}

// slurmTime is a timestamp as Slurm prints it (local time, no zone), or
// Unknown when there is none.
func slurmTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "Unknown"
	}
	return t.Local().Format("2006-01-02T15:04:05")
}

// jobUsed is how long the job has run: until it ended, or until now.
func jobUsed(j api.Job, now time.Time) time.Duration {
	if j.StartedAt == nil {
		return 0
	}
	end := now
	if j.EndedAt != nil {
		end = *j.EndedAt
	}
	return end.Sub(*j.StartedAt)
}

// jobNodes are the names of the nodes the job holds or held.
func jobNodes(j api.Job) []string {
	var out []string
	for _, h := range j.Hosts {
		out = append(out, h.Node)
	}
	return out
}

// jobCPUs is what the job takes: a CPU per rank, or per rank's CPUs.
func jobCPUs(j api.Job) int {
	return max(j.Spec.NP, 1) * max(j.Spec.CPUsPerRank, 1)
}

// jobEnv is a variable of the job's environment ("" when absent, or when
// the listing withheld another user's environment).
func jobEnv(j api.Job, name string) string {
	for _, kv := range j.Spec.Env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// slurmExitCode is sacct's ExitCode: status:signal.
func slurmExitCode(code *int) string {
	switch {
	case code == nil:
		return "0:0"
	case *code > 128 && *code < 160:
		return "0:" + strconv.Itoa(*code-128)
	}
	return strconv.Itoa(*code) + ":0"
}

// pendingReason is squeue's reason for a job that waits. The leader
// starts its wait reasons with Slurm's word where Slurm has one
// (JobHeldUser, BeginTime, Dependency, JobArrayTaskLimit); the others,
// and a job the leader has not looked at yet, are told apart here.
func pendingReason(j api.Job, now time.Time) string {
	if j.Held {
		return "JobHeldUser" // the job's own state, which the leader's reason may not have caught up with
	}
	if w, _, ok := strings.Cut(j.WaitReason, ":"); ok && w != "" && !strings.ContainsAny(w, " \t") && w[0] >= 'A' && w[0] <= 'Z' {
		return w
	}
	switch {
	case !j.Spec.Begin.IsZero() && j.Spec.Begin.After(now):
		return "BeginTime"
	case j.WaitReason == "" && len(j.Spec.Depend) > 0:
		return "Dependency"
	case j.WaitReason == "":
		return "None"
	}
	return "Resources"
}

// squeueField is the value of one squeue field letter for j.
func squeueField(j api.Job, letter byte, now time.Time) (string, bool) {
	long, short := slurmState(j)
	switch letter {
	case 'i':
		return displayID(j), true
	case 'A':
		return strconv.FormatUint(j.ID, 10), true
	case 'F':
		if j.ArrayJobID != 0 {
			return strconv.FormatUint(j.ArrayJobID, 10), true
		}
		return strconv.FormatUint(j.ID, 10), true
	case 'K':
		if j.ArrayTaskID != nil {
			return strconv.Itoa(*j.ArrayTaskID), true
		}
		return "N/A", true
	case 'j':
		if j.Name != "" {
			return j.Name, true
		}
		if len(j.Spec.Cmd) > 0 {
			return filepath.Base(j.Spec.Cmd[0]), true
		}
		return "", true
	case 'u':
		return j.Owner, true
	case 'T':
		return long, true
	case 't':
		return short, true
	case 'M':
		return slurmDuration(jobUsed(j, now)), true
	case 'l':
		return slurmTimeLimit(j.Spec.Timeout), true
	case 'D':
		if n := len(j.Hosts); n > 0 {
			return strconv.Itoa(n), true
		}
		return "1", true
	case 'C':
		return strconv.Itoa(jobCPUs(j)), true
	case 'N':
		return jobfmt.CompressHosts(jobNodes(j)), true
	case 'R':
		if long == "PENDING" {
			return "(" + pendingReason(j, now) + ")", true
		}
		return jobfmt.CompressHosts(jobNodes(j)), true
	case 'r':
		if long == "PENDING" {
			return pendingReason(j, now), true
		}
		return "None", true
	case 'P':
		if j.Spec.Partition != "" {
			return j.Spec.Partition, true
		}
		return slurmPartition, true
	case 'a':
		return jobEnv(j, "SLURM_JOB_ACCOUNT"), true
	case 'V':
		return slurmTime(&j.SubmittedAt), true
	case 'S':
		return slurmTime(j.StartedAt), true
	case 'e':
		return slurmTime(j.EndedAt), true
	case 'Q':
		return strconv.FormatFloat(j.EffectivePriority, 'f', -1, 64), true
	case 'Z':
		return j.Spec.Workdir, true
	case 'o':
		return strings.Join(j.Spec.Cmd, " "), true
	case '%':
		return "%", true
	}
	return "", false
}

// slurmPartition is the name Slurm's commands give a cluster with no
// partition set, and a job outside every partition: every node.
const slurmPartition = "all"

// formatPiece is one part of a squeue/sinfo format: literal text, or a
// field letter with its width (negative: left-justified, as Slurm pads
// unless the width has a dot).
type formatPiece struct {
	text   string
	letter byte
	width  int
	right  bool
}

// parseSlurmFormat reads a %-format as squeue -o and sinfo -o take it:
// %[.][width]letter, anything else literal.
func parseSlurmFormat(f string, known func(byte) bool) ([]formatPiece, error) {
	var out []formatPiece
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			j := strings.IndexByte(f[i:], '%')
			if j < 0 {
				j = len(f) - i
			}
			out = append(out, formatPiece{text: f[i : i+j]})
			i += j - 1
			continue
		}
		p := formatPiece{}
		i++
		if i < len(f) && f[i] == '.' {
			p.right = true
			i++
		}
		start := i
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
		}
		if i > start {
			p.width, _ = strconv.Atoi(f[start:i])
		}
		if i >= len(f) {
			return nil, fmt.Errorf("format %q ends inside a field: give %%[.][width]LETTER, e.g. %%.18i", f)
		}
		if f[i] == '%' {
			out = append(out, formatPiece{text: "%"})
			continue
		}
		if !known(f[i]) {
			return nil, fmt.Errorf("format %q: no field %%%c", f, f[i])
		}
		p.letter = f[i]
		out = append(out, p)
	}
	return out, nil
}

// render writes one line of a parsed format, each field through value.
// A field wider than its width is cut, as Slurm cuts it.
func render(pieces []formatPiece, value func(byte) string) string {
	var b strings.Builder
	for _, p := range pieces {
		if p.letter == 0 {
			b.WriteString(p.text)
			continue
		}
		v := value(p.letter)
		if p.width > 0 {
			if len(v) > p.width {
				v = v[:p.width]
			}
			if p.right {
				v = strings.Repeat(" ", p.width-len(v)) + v
			} else {
				v += strings.Repeat(" ", p.width-len(v))
			}
		}
		b.WriteString(v)
	}
	return b.String()
}

// squeueHeaders are the column titles squeue prints for each letter.
var squeueHeaders = map[byte]string{
	'i': "JOBID", 'A': "JOBID", 'F': "ARRAY_JOB_ID", 'K': "ARRAY_TASK_ID", 'j': "NAME", 'u': "USER",
	'T': "STATE", 't': "ST", 'M': "TIME", 'l': "TIME_LIMIT", 'D': "NODES", 'C': "CPUS",
	'N': "NODELIST", 'R': "NODELIST(REASON)", 'r': "REASON", 'P': "PARTITION", 'a': "ACCOUNT",
	'V': "SUBMIT_TIME", 'S': "START_TIME", 'e': "END_TIME", 'Q': "PRIORITY", 'Z': "WORK_DIR", 'o': "COMMAND",
}

// squeueDefaultFormat is squeue's own default.
const squeueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
