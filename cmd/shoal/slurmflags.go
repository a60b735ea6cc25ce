package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Parsers of the job flags Slurm users bring: --begin,
// --dependency, --array. Pure: the clock is passed in.

// parseBegin reads --begin as sbatch does: now+N[s|m|h|d] (seconds when
// no unit), a date and time (2026-11-24T15:04[:05], or RFC 3339), a date
// (midnight), or a time of day (today, or tomorrow once it has passed).
// A time already past is refused: the job would start at once, which is
// not what a user who wrote a time meant.
func parseBegin(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "now"); ok {
		if rest == "" {
			return now, nil
		}
		n, unit := strings.TrimPrefix(rest, "+"), time.Second
		if !strings.HasPrefix(rest, "+") || n == "" {
			return time.Time{}, fmt.Errorf("--begin %q: use now+N with a unit s, m, h or d (e.g. now+30m)", s)
		}
		for suffix, u := range map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
			"seconds": time.Second, "minutes": time.Minute, "hours": time.Hour, "days": 24 * time.Hour} {
			if v, ok := strings.CutSuffix(n, suffix); ok && v != "" && strings.Trim(v, "0123456789") == "" {
				n, unit = v, u
				break
			}
		}
		k, err := strconv.Atoi(n)
		if err != nil || k < 0 || k > 366*24*3600 {
			return time.Time{}, fmt.Errorf("--begin %q: use now+N with a unit s, m, h or d (e.g. now+30m)", s)
		}
		return now.Add(time.Duration(k) * unit), nil
	}
	var t time.Time
	if ts, err := time.Parse(time.RFC3339, s); err == nil {
		t = ts
	} else if tod, ok := parseTimeOfDay(s, now); ok {
		return tod, nil
	} else {
		for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
			if ts, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
				t = ts
				break
			}
		}
	}
	if t.IsZero() {
		return time.Time{}, fmt.Errorf("--begin %q: use now+30m, 15:04, 2026-11-24T15:04 or RFC 3339", s)
	}
	if t.Before(now) {
		return time.Time{}, fmt.Errorf("--begin %s is in the past (now %s): give a later time, or leave --begin out to start at once", t.Format(time.DateTime), now.Format(time.DateTime))
	}
	return t, nil
}

// parseTimeOfDay reads HH:MM[:SS] as the next such time from now.
func parseTimeOfDay(s string, now time.Time) (time.Time, bool) {
	for _, layout := range []string{"15:04:05", "15:04"} {
		tod, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		y, m, d := now.Date()
		t := time.Date(y, m, d, tod.Hour(), tod.Minute(), tod.Second(), 0, now.Location())
		if t.Before(now) {
			t = t.AddDate(0, 0, 1)
		}
		return t, true
	}
	return time.Time{}, false
}

// parseDependency reads --dependency: conditions separated by commas (all
// must hold), each TYPE:ID[:ID...] or singleton. An ID may name an array
// (all its tasks). Slurm's "?" (any one condition) is not supported.
func parseDependency(s string) ([]api.Dependency, error) {
	if strings.Contains(s, "?") {
		return nil, fmt.Errorf("--dependency %q: '?' (any of) is not supported; separate conditions by commas (all of)", s)
	}
	var out []api.Dependency
	for _, cond := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(cond), ":")
		typ := parts[0]
		if !slices.Contains(raftfsm.DependTypes, typ) {
			return nil, fmt.Errorf("--dependency %q: unknown condition %q; use afterok:ID, afternotok:ID, afterany:ID or singleton", s, typ)
		}
		d := api.Dependency{Type: typ}
		if typ == raftfsm.DependSingleton {
			if len(parts) > 1 {
				return nil, fmt.Errorf("--dependency %q: singleton takes no job IDs", s)
			}
			out = append(out, d)
			continue
		}
		if len(parts) < 2 {
			return nil, fmt.Errorf("--dependency %q: %s needs job IDs, e.g. %s:12:13", s, typ, typ)
		}
		for _, p := range parts[1:] {
			id, err := strconv.ParseUint(p, 10, 64)
			if err != nil || id == 0 {
				return nil, fmt.Errorf("--dependency %q: %q is not a job ID (for an array, give its ID: all its tasks count)", s, p)
			}
			d.IDs = append(d.IDs, id)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseArray reads --array: indices and ranges separated by commas
// (0-99, 1,3,5, 1-9:2 with a step), then %N for at most N tasks at once.
func parseArray(s string) (api.ArraySpec, error) {
	bad := func(why string) (api.ArraySpec, error) {
		return api.ArraySpec{}, fmt.Errorf("--array %q: %s; use e.g. 0-99, 1,3,5, 1-9:2 or 0-99%%10", s, why)
	}
	var a api.ArraySpec
	list, limit, hasLimit := strings.Cut(s, "%")
	if hasLimit {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 {
			return bad("%N needs a number of tasks at once, at least 1")
		}
		a.Limit = n
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(list, ",") {
		rng, step, hasStep := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(rng, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return bad(fmt.Sprintf("%q is not a task index (0 or more)", part))
		}
		last, by := first, 1
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				return bad(fmt.Sprintf("%q is not a range FIRST-LAST", part))
			}
			if last < first {
				return bad(fmt.Sprintf("range %s ends before it starts", rng))
			}
		}
		if hasStep {
			if by, err = strconv.Atoi(step); err != nil || by < 1 || !isRange {
				return bad(fmt.Sprintf("%q: a step goes after a range, FIRST-LAST:STEP with STEP >= 1", part))
			}
		}
		if last > raftfsm.MaxArrayTaskID {
			return bad(fmt.Sprintf("task indices go up to %d", raftfsm.MaxArrayTaskID))
		}
		for t := first; t <= last; t += by {
			if !seen[t] {
				seen[t] = true
				a.Tasks = append(a.Tasks, t)
			}
			if len(a.Tasks) > raftfsm.MaxArrayTasks {
				return bad(fmt.Sprintf("more than %d tasks", raftfsm.MaxArrayTasks))
			}
		}
	}
	slices.Sort(a.Tasks)
	return a, nil
}

// foldIndices writes sorted indices as squeue does: 3-5,7,9-12.
func foldIndices(ts []int) string {
	var b strings.Builder
	for i := 0; i < len(ts); {
		j := i
		for j+1 < len(ts) && ts[j+1] == ts[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", ts[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", ts[i], ts[j])
		}
		i = j + 1
	}
	return b.String()
}

// jobRef checks a job argument: an ID, or ARRAY_TASK for one task of an
// array (12_3).
func jobRef(s string) (string, error) {
	arr, task, isTask := strings.Cut(s, "_")
	if id, err := strconv.ParseUint(arr, 10, 64); err != nil || id == 0 {
		return "", fmt.Errorf("job %q: give a job ID, or ARRAY_TASK for one task of an array (e.g. 12_3)", s)
	}
	if isTask {
		if n, err := strconv.Atoi(task); err != nil || n < 0 {
			return "", fmt.Errorf("job %q: the task after _ is an index, 0 or more (e.g. 12_3)", s)
		}
	}
	return s, nil
}
