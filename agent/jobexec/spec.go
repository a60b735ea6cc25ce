package jobexec

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Arg0 is the argv[0] under which the agent's executable is the helper.
const Arg0 = "shoal-exec-job"

// Spec is what the helper does before it executes a job's command.
type Spec struct {
	// Cgroup are the directories of the job's cgroup, one per mounted
	// hierarchy on cgroup v1 (confine.Cgroup.Dirs): the helper writes its
	// pid to cgroup.procs in each before anything else. Empty: the job
	// stays in the agent's cgroup.
	Cgroup []string `json:"cgroup,omitempty"`
	// Cred is the identity the job runs as; nil keeps the helper's own (an
	// agent that is not root, or a job of the agent's own user).
	Cred *Cred `json:"cred,omitempty"`
	// Limits are set before anything else; resources not named keep the
	// helper's (the agent's) limits.
	Limits []Rlimit `json:"limits,omitempty"`
	// OOMScoreAdj is written to /proc/self/oom_score_adj; nil leaves it.
	OOMScoreAdj *int `json:"oom_score_adj,omitempty"`
	// Mkdir is a directory to create (mode 0700, parents too) as the user.
	Mkdir string `json:"mkdir,omitempty"`
	// RemoveAll is a path to remove, recursively, as the user.
	RemoveAll string `json:"remove_all,omitempty"`
	// Dir is the working directory, entered as the user; "" keeps the
	// helper's.
	Dir string `json:"dir,omitempty"`
	// Create are files to open for writing as the user, relative to Dir,
	// after everything else; the helper hands their descriptors back
	// instead of executing a command (OpenFiles).
	Create []string `json:"create,omitempty"`
	// Parent is the pid of the agent. Changing identity clears the
	// parent-death signal, so the helper sets it again and gives up if its
	// parent is already gone. 0: no parent-death signal.
	Parent int `json:"parent,omitempty"`
	// Warm starts the helper before its command (StartWarm): it joins
	// Cgroup and sets Limits and OOMScoreAdj, then waits for the command,
	// its environment and its standard streams on fd 4 before the rest.
	Warm bool `json:"warm,omitempty"`
}

// Cred is a user identity with its supplementary groups.
type Cred struct {
	User   string   `json:"user"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

func (c *Cred) String() string {
	if c == nil {
		return "the agent's user"
	}
	return fmt.Sprintf("user %s (uid %d)", c.User, c.UID)
}

// Infinity is an unlimited limit (RLIM_INFINITY).
const Infinity = math.MaxUint64

// Rlimit is one resource limit: a setrlimit(2) resource by its ulimit name
// and its soft (Cur) and hard (Max) values.
type Rlimit struct {
	Resource string `json:"resource"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// resources maps a limit's name to its setrlimit(2) resource and to the
// name /proc/PID/limits gives it.
var resources = []struct {
	name, proc string
	res        int
}{
	{"as", "Max address space", unix.RLIMIT_AS},
	{"core", "Max core file size", unix.RLIMIT_CORE},
	{"cpu", "Max cpu time", unix.RLIMIT_CPU},
	{"data", "Max data size", unix.RLIMIT_DATA},
	{"fsize", "Max file size", unix.RLIMIT_FSIZE},
	{"locks", "Max file locks", unix.RLIMIT_LOCKS},
	{"memlock", "Max locked memory", unix.RLIMIT_MEMLOCK},
	{"msgqueue", "Max msgqueue size", unix.RLIMIT_MSGQUEUE},
	{"nice", "Max nice priority", unix.RLIMIT_NICE},
	{"nofile", "Max open files", unix.RLIMIT_NOFILE},
	{"nproc", "Max processes", unix.RLIMIT_NPROC},
	{"rss", "Max resident set", unix.RLIMIT_RSS},
	{"rtprio", "Max realtime priority", unix.RLIMIT_RTPRIO},
	{"rttime", "Max realtime timeout", unix.RLIMIT_RTTIME},
	{"sigpending", "Max pending signals", unix.RLIMIT_SIGPENDING},
	{"stack", "Max stack size", unix.RLIMIT_STACK},
}

func resourceNumber(name string) (int, bool) {
	for _, r := range resources {
		if r.name == name {
			return r.res, true
		}
	}
	return 0, false
}

func resourceNames() string {
	names := make([]string, len(resources))
	for i, r := range resources {
		names[i] = r.name
	}
	return strings.Join(names, ", ")
}

// ParseRlimit reads "RESOURCE=SOFT[:HARD]" (as --job-rlimit takes it): a
// ulimit resource name, values as numbers or "unlimited"; without HARD the
// hard limit is SOFT.
func ParseRlimit(s string) (Rlimit, error) {
	name, vals, ok := strings.Cut(s, "=")
	if !ok {
		return Rlimit{}, fmt.Errorf("job rlimit %q: want RESOURCE=SOFT[:HARD], e.g. nofile=1024:4096", s)
	}
	if _, ok := resourceNumber(name); !ok {
		return Rlimit{}, fmt.Errorf("job rlimit %q: unknown resource %q (want one of %s)", s, name, resourceNames())
	}
	soft, hard, both := strings.Cut(vals, ":")
	if !both {
		hard = soft
	}
	cur, err := parseLimitValue(soft)
	if err != nil {
		return Rlimit{}, fmt.Errorf("job rlimit %q: soft limit: %w", s, err)
	}
	maxV, err := parseLimitValue(hard)
	if err != nil {
		return Rlimit{}, fmt.Errorf("job rlimit %q: hard limit: %w", s, err)
	}
	if cur > maxV {
		return Rlimit{}, fmt.Errorf("job rlimit %q: soft limit above the hard limit", s)
	}
	return Rlimit{Resource: name, Cur: cur, Max: maxV}, nil
}

func parseLimitValue(s string) (uint64, error) {
	if s == "unlimited" || s == "infinity" {
		return Infinity, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number or \"unlimited\"", s)
	}
	return v, nil
}

// String gives the limit back in ParseRlimit's form.
func (r Rlimit) String() string {
	f := func(v uint64) string {
		if v == Infinity {
			return "unlimited"
		}
		return strconv.FormatUint(v, 10)
	}
	return r.Resource + "=" + f(r.Cur) + ":" + f(r.Max)
}

// DefaultNofileSoft is the soft limit on open files a job starts with unless
// the site says otherwise: what the kernel gives init and what systemd gives
// every service and login session (select(2) cannot watch a descriptor past
// 1023). A program that needs more raises its soft limit up to the hard
// one itself, as Go programs do at start.
const DefaultNofileSoft = 1024

// SystemLimits turns the text of /proc/1/limits into the limits every job
// starts with: those of PID 1, the process every login session's limits
// descend from before pam_limits adjusts them, except that the soft limit
// on open files is at most DefaultNofileSoft (init systems raise their own
// and hand 1024 to their children). Lines it does not know are skipped.
func SystemLimits(procLimits string) ([]Rlimit, error) {
	var out []Rlimit
	sc := bufio.NewScanner(strings.NewReader(procLimits))
	for sc.Scan() {
		line := sc.Text()
		for _, r := range resources {
			rest, ok := strings.CutPrefix(line, r.proc)
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			if len(f) < 2 {
				return nil, fmt.Errorf("limits line %q: want a soft and a hard value", line)
			}
			cur, err := parseLimitValue(f[0])
			if err != nil {
				return nil, fmt.Errorf("limits line %q: %w", line, err)
			}
			maxV, err := parseLimitValue(f[1])
			if err != nil {
				return nil, fmt.Errorf("limits line %q: %w", line, err)
			}
			if r.name == "nofile" {
				cur = min(cur, DefaultNofileSoft)
			}
			out = append(out, Rlimit{Resource: r.name, Cur: cur, Max: maxV})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no limits found")
	}
	return out, nil
}

// MergeLimits returns base with every resource that over names replaced by
// over's value, sorted by resource name.
func MergeLimits(base, over []Rlimit) []Rlimit {
	out := slices.Clone(base)
	for _, o := range over {
		i := slices.IndexFunc(out, func(r Rlimit) bool { return r.Resource == o.Resource })
		if i >= 0 {
			out[i] = o
		} else {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Rlimit) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}

// Validate says what is wrong with a limit built in code rather than parsed.
func (r Rlimit) Validate() error {
	if _, ok := resourceNumber(r.Resource); !ok {
		return fmt.Errorf("job rlimit: unknown resource %q (want one of %s)", r.Resource, resourceNames())
	}
	if r.Cur > r.Max {
		return fmt.Errorf("job rlimit %s: soft limit above the hard limit", r)
	}
	return nil
}
