package main

import (
	"fmt"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

var sacctOpts = []slurmOpt{
	{"noheader", 'n', false}, {"format", 'o', true}, {"jobs", 'j', true}, {"user", 'u', true},
	{"allusers", 'a', false}, {"state", 's', true}, {"parsable", 'p', false}, {"parsable2", 'P', false},
	{"allocations", 'X', false}, {"starttime", 'S', true}, {"endtime", 'E', true}, {"name", 0, true},
	{"brief", 'b', false}, {"long", 'l', false}, {"helpformat", 'e', false}, {"help", 'h', false}, {"usage", 0, false},
}

const sacctHelp = `sacct lists jobs with their accounting, as Slurm's sacct does: the calling
user's jobs by default (-a for everyone's), one row per job and, for a batch
script, a row for its .batch step and one per srun/mpirun step (-X: jobs only).

Options: -j/--jobs IDS, -u/--user USERS, -a/--allusers, -s/--state STATES,
--name NAMES, -o/--format FIELD[%WIDTH],... (-e lists the fields), -n/--noheader,
-p/--parsable (|-separated), -P/--parsable2 (no trailing |), -X/--allocations,
-b/--brief. -S/-E are accepted: shoal keeps every job it still holds.

Examples:
  sacct -j 12
  sacct --parsable2 -n -j 12 --format=JobID,State,ExitCode
  sacct -X -o JobID,JobName%20,Elapsed,NodeList`

// sacctField is one column sacct can print: its header, its default
// width, and its value for a row.
type sacctField struct {
	name  string
	width int
	value func(r sacctRow) string
}

// sacctRow is one line of sacct: a job, or one of its steps.
type sacctRow struct {
	job  api.Job
	step *api.Step // nil: the job itself
	// batch marks the job's .batch row: the script itself.
	batch bool
	now   time.Time
}

func (r sacctRow) id() string {
	switch {
	case r.batch:
		return displayID(r.job) + ".batch"
	case r.step != nil:
		return displayID(r.job) + "." + strconv.Itoa(r.step.N)
	}
	return displayID(r.job)
}

func (r sacctRow) state() string {
	if r.step == nil {
		long, _ := slurmState(r.job)
		return long
	}
	switch {
	case r.step.EndedAt == nil:
		return "RUNNING"
	case r.step.ExitCode != nil && *r.step.ExitCode == 0:
		return "COMPLETED"
	}
	return "FAILED"
}

func (r sacctRow) times() (start, end *time.Time) {
	if r.step != nil {
		return r.step.StartedAt, r.step.EndedAt
	}
	return r.job.StartedAt, r.job.EndedAt
}

var sacctFields = []sacctField{
	{"JobID", 12, func(r sacctRow) string { return r.id() }},
	{"JobIDRaw", 12, func(r sacctRow) string {
		s := strconv.FormatUint(r.job.ID, 10)
		if r.batch {
			return s + ".batch"
		}
		if r.step != nil {
			return s + "." + strconv.Itoa(r.step.N)
		}
		return s
	}},
	{"JobName", 10, func(r sacctRow) string {
		switch {
		case r.batch:
			return "batch"
		case r.step != nil && len(r.step.Cmd) > 0:
			return filepath.Base(r.step.Cmd[0])
		}
		v, _ := squeueField(r.job, 'j', r.now)
		return v
	}},
	{"Partition", 10, func(r sacctRow) string { v, _ := squeueField(r.job, 'P', r.now); return v }},
	{"Account", 10, func(r sacctRow) string { return jobEnv(r.job, "SLURM_JOB_ACCOUNT") }},
	{"User", 9, func(r sacctRow) string { return r.job.Owner }},
	{"AllocCPUS", 10, func(r sacctRow) string { return strconv.Itoa(jobCPUs(r.job)) }},
	{"NTasks", 8, func(r sacctRow) string { return strconv.Itoa(max(r.job.Spec.NP, 1)) }},
	{"State", 10, func(r sacctRow) string { return r.state() }},
	{"ExitCode", 8, func(r sacctRow) string {
		if r.step != nil {
			return slurmExitCode(r.step.ExitCode)
		}
		return slurmExitCode(r.job.ExitCode)
	}},
	{"Elapsed", 10, func(r sacctRow) string {
		start, end := r.times()
		if start == nil {
			return "00:00:00"
		}
		e := r.now
		if end != nil {
			e = *end
		}
		return slurmElapsed(e.Sub(*start))
	}},
	{"Submit", 19, func(r sacctRow) string { return slurmTime(&r.job.SubmittedAt) }},
	{"Start", 19, func(r sacctRow) string { s, _ := r.times(); return slurmTime(s) }},
	{"End", 19, func(r sacctRow) string { _, e := r.times(); return slurmTime(e) }},
	{"NNodes", 8, func(r sacctRow) string { v, _ := squeueField(r.job, 'D', r.now); return v }},
	{"NodeList", 15, func(r sacctRow) string {
		if r.step != nil && r.step.Nodes != "" {
			return r.step.Nodes
		}
		v, _ := squeueField(r.job, 'N', r.now)
		if v == "" {
			return "None assigned"
		}
		return v
	}},
	{"Timelimit", 10, func(r sacctRow) string { return slurmTimeLimit(r.job.Spec.Timeout) }},
	{"WorkDir", 20, func(r sacctRow) string { return r.job.Spec.Workdir }},
	{"Reason", 20, func(r sacctRow) string {
		if r.job.Reason != "" {
			return r.job.Reason
		}
		return "None"
	}},
}

// sacctDefault is sacct's own default field list.
var sacctDefault = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"

// sacctColumns reads --format: names in any case, each with an optional
// %WIDTH (a negative one, or none in a parsable listing, is unpadded).
func sacctColumns(format string) ([]sacctField, error) {
	var out []sacctField
	for _, spec := range strings.Split(format, ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		name, width, hasWidth := strings.Cut(spec, "%")
		i := slices.IndexFunc(sacctFields, func(f sacctField) bool { return strings.EqualFold(f.name, name) })
		if i < 0 {
			var names []string
			for _, f := range sacctFields {
				names = append(names, f.name)
			}
			return nil, fmt.Errorf("invalid field requested: %q (sacct -e lists them: %s)", name, strings.Join(names, ","))
		}
		f := sacctFields[i]
		if hasWidth {
			w, err := strconv.Atoi(width)
			if err != nil {
				return nil, fmt.Errorf("field %q: the width after %% is a number", spec)
			}
			f.width = w
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--format %q names no field", format)
	}
	return out, nil
}

func sacct(c *cli.Context, args []string) error {
	a, err := parseSlurmArgs("sacct", args, sacctOpts)
	if err != nil {
		return cli.Exit(err.Error(), exitUsage)
	}
	if a.has("help") || a.has("usage") {
		writeHelp(c, sacctHelp)
		return nil
	}
	if a.has("helpformat") {
		var names []string
		for _, f := range sacctFields {
			names = append(names, f.name)
		}
		fmt.Fprintln(c.App.Writer, strings.Join(names, " "))
		return nil
	}
	format := sacctDefault
	if a.has("brief") {
		format = "JobID,State,ExitCode"
	}
	if a.has("format") {
		format = strings.Join(a.list("format"), ",")
	}
	cols, err := sacctColumns(format)
	if err != nil {
		return cli.Exit("sacct: "+err.Error(), exitUsage)
	}
	users := a.list("user")
	if len(users) == 0 && !a.has("allusers") && !a.has("jobs") {
		if u, err := user.Current(); err == nil && u.Uid != "0" {
			users = []string{u.Username} // sacct shows the caller's jobs; root's sacct shows all
		}
	}
	js, err := slurmJobs(c, a.list("jobs"))
	if err != nil {
		return err
	}
	states, names := a.list("state"), a.list("name")
	now := time.Now()
	sep, trail := "", ""
	switch {
	case a.has("parsable2"):
		sep = "|"
	case a.has("parsable"):
		sep, trail = "|", "|"
	}
	line := func(val func(f sacctField) string) string {
		parts := make([]string, len(cols))
		for i, f := range cols {
			v := val(f)
			if sep == "" {
				w := f.width
				if w < 0 {
					w = -w
				}
				if len(v) > w {
					v = v[:w-1] + "+" // sacct marks a cut value with +
				}
				v = strings.Repeat(" ", w-len(v)) + v
			}
			parts[i] = v
		}
		if sep == "" {
			return strings.Join(parts, " ")
		}
		return strings.Join(parts, sep) + trail
	}
	if !a.has("noheader") {
		fmt.Fprintln(c.App.Writer, line(func(f sacctField) string { return f.name }))
		if sep == "" {
			fmt.Fprintln(c.App.Writer, line(func(f sacctField) string { return strings.Repeat("-", max(f.width, -f.width)) }))
		}
	}
	for _, j := range js {
		switch {
		case len(states) > 0 && !slurmStateMatches(j, states):
			continue
		case len(users) > 0 && !slices.Contains(users, j.Owner):
			continue
		case len(names) > 0 && !slices.Contains(names, j.Name):
			continue
		}
		rows := []sacctRow{{job: j, now: now}}
		if !a.has("allocations") && len(j.Attempts) > 0 {
			last := j.Attempts[len(j.Attempts)-1]
			if j.Spec.Batch && j.StartedAt != nil {
				rows = append(rows, sacctRow{job: j, batch: true, now: now})
			}
			for i := range last.Steps {
				rows = append(rows, sacctRow{job: j, step: &last.Steps[i], now: now})
			}
		}
		for _, r := range rows {
			fmt.Fprintln(c.App.Writer, line(func(f sacctField) string { return f.value(r) }))
		}
	}
	return nil
}
