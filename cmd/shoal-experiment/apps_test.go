package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// LAMMPS, for real: Debian's lmp (make deps installs it) runs the
// embedded LJ melt on 2 Open MPI ranks over TCP on this host, and its
// output yields the loop time and the Comm row the experiment records.
func TestLammpsMeltRunsAndParses(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"lmp", "mpirun.openmpi"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed: make deps installs Debian's lammps and openmpi-bin", bin)
			}
			t.Skipf("%s not installed (make deps)", bin)
		}
	}
	dir := t.TempDir()
	c := config{apps: []string{"lammps"}, lmp: "lmp", lammpsSteps: 20, mpi: "openmpi"}
	apps, err := buildApps(c, dir)
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{"mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "tcp,self",
		"--mca", "mpi_yield_when_idle", "1", "-np", "2"}, apps[0].argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	loop, comm, err := apps[0].parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if !(loop > 0) || !(comm > 0) || comm > loop {
		t.Errorf("loop %v s, comm %v s: want 0 < comm <= loop", loop, comm)
	}
	if !strings.Contains(string(out), "on 2 procs for 20 steps with 4000 atoms") {
		t.Errorf("not the 20-step melt of 4000 atoms on 2 ranks:\n%s", out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("LAMMPS left files in its directory (want only in.melt): %v", ents)
	}
}

func TestParsers(t *testing.T) {
	t.Parallel()
	if tm, cm, err := parseHalo("rank 0\ntime_s=3.25 comm_s=3.125\n"); err != nil || tm != 3.25 || cm != 3.125 {
		t.Errorf("halo: %v %v %v", tm, cm, err)
	}
	lmp := "Loop time of 1.5e-01 on 4 procs for 100 steps with 4000 atoms\n\nSection |  min time  |  avg time  |  max time  |%varavg| %total\n" +
		"Pair    | 0.01 | 0.02 | 0.03 | 1.0 | 10\nComm    | 0.086754   | 0.093459   | 0.10016    |   2.2 | 68.63\n"
	if tm, cm, err := parseLammps(lmp); err != nil || tm != 0.15 || cm != 0.093459 {
		t.Errorf("lammps: %v %v %v", tm, cm, err)
	}
	for _, bad := range []string{"", "ERROR: Lost atoms", "time_s=x"} {
		if _, _, err := parseLammps(bad); err == nil {
			t.Errorf("parseLammps(%q): no error", bad)
		}
		if _, _, err := parseHalo(bad); err == nil {
			t.Errorf("parseHalo(%q): no error", bad)
		}
	}
}

// The CSV keeps every field, and a CSV from before the cases (12
// columns) still reads, as lab12's steady-state halo runs.
func TestCSVRoundTripAndOldFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := []runRec{
		{Rep: 1, Order: 2, Policy: "netload", Hosts: []string{"n01", "n02"}, TimeS: 1.5, CommS: 1.25, WallS: 2, ModelT: 0.5,
			MinAvailMbps: 30, Switches: 1, Case: "bulk10", Kind: "cold", Phase: 0, App: "lammps"},
		{Rep: 3, Order: 1, Policy: "oracle", Hosts: []string{"n05", "n06"}, TimeS: 1, CommS: 0.75, WallS: 1.5,
			MinAvailMbps: 100, Switches: 1, Hogs: 1, Err: "boom, twice", Case: "degrade10", Kind: "steady", Phase: 1, App: "halo", PlacedS: 71.5, Retest: retestAfter},
	}
	path := filepath.Join(dir, "x.csv")
	if err := writeCSV(path, recs); err != nil {
		t.Fatal(err)
	}
	got, err := readCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, recs)
	}
	old := filepath.Join(dir, "old.csv")
	if err := os.WriteFile(old, []byte("rep,order,policy,hosts,time_s,comm_s,wall_s,model_T,min_avail_mbps,switches,hog_nodes,error\n"+
		"1,1,random,n01 n02,2.5,2.0,3.0,0.1,20.0,2,0,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = readCSV(old)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != "steady" || got[0].App != "halo" || got[0].TimeS != 2.5 || got[0].Case != "" {
		t.Errorf("old CSV: %+v", got)
	}
	if err := os.WriteFile(old, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCSV(old); err == nil {
		t.Error("a CSV of another shape read without error")
	}
}

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	good := config{cases: []string{"lab12"}, testbed: "testbed", policies: []string{"netload@0.1/flow=0", "oracle", "t-oracle", "random"}, apps: []string{"halo", "lammps"}, mpi: "openmpi", np: 4, reps: 1, changeScale: 1}
	if err := good.check(); err != nil {
		t.Fatal(err)
	}
	withSlurm := good
	withSlurm.policies, withSlurm.ppn, withSlurm.arrayTasks, withSlurm.poll = []string{"slurm", "slurm-tree", "slurm-measured", "netload"}, 2, 100, time.Second
	if err := withSlurm.check(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*config){
		"no cases":          func(c *config) { c.cases = nil },
		"bad policy":        func(c *config) { c.policies = []string{"best"} },
		"bad app":           func(c *config) { c.apps = []string{"hpl"} },
		"bad mpi":           func(c *config) { c.mpi = "lam" },
		"one rank":          func(c *config) { c.np = 1 },
		"negative reps":     func(c *config) { c.coldReps = -1 },
		"no policies":       func(c *config) { c.policies = nil },
		"zero change scale": func(c *config) { c.changeScale = 0 },
		"NaN change scale":  func(c *config) { c.changeScale = math.NaN() },
		"slurm without ppn": func(c *config) { c.policies = []string{"slurm", "netload"} },
		"slurm, odd ppn":    func(c *config) { c.policies, c.ppn = []string{"slurm-tree"}, 3 },
		"slurm, no poll":    func(c *config) { c.policies, c.ppn, c.arrayTasks = []string{"slurm-measured"}, 1, 1 },
	} {
		c := good
		mod(&c)
		if err := c.check(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if f := good.caseFile("bulk10"); f != filepath.Join("testbed", "bulk10.json") {
		t.Errorf("caseFile(bulk10) = %s", f)
	}
	if f := good.caseFile("/tmp/x.json"); f != "/tmp/x.json" {
		t.Errorf("caseFile(/tmp/x.json) = %s", f)
	}
}

// The report splits a case's runs into cold start first, then each
// steady-state phase, per program, and the summary has a row for each.
func TestReportSectionsAndSummary(t *testing.T) {
	t.Parallel()
	var recs []runRec
	add := func(kind string, phase, rep int, pol string, ts float64, minAvail float64) {
		for _, a := range []string{"lammps", "halo"} {
			recs = append(recs, runRec{Case: "degrade10", Kind: kind, Phase: phase, App: a, Rep: rep, Policy: pol,
				Hosts: []string{"n01", "n02"}, TimeS: ts, MinAvailMbps: minAvail})
		}
	}
	add("steady", 1, 3, "netload", 4, 10)
	add("steady", 1, 3, "oracle", 2, 80)
	add("steady", 1, 3, "random", 8, 40)
	add("steady", 0, 1, "netload", 2, 100)
	add("steady", 0, 1, "oracle", 2, 100)
	add("steady", 0, 1, "random", 4, 40)
	add("cold", 0, 1, "netload", 3, 40)
	add("cold", 0, 1, "oracle", 1, 100)
	add("cold", 0, 1, "random", 6, 40)
	var got []string
	for _, s := range sections(recs, "degrade10") {
		got = append(got, fmt.Sprintf("%s/%d/%s", s.key.kind, s.key.phase, s.key.app))
	}
	want := []string{"cold/0/halo", "cold/0/lammps", "steady/0/halo", "steady/0/lammps", "steady/1/halo", "steady/1/lammps"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sections %v, want %v", got, want)
	}
	topo, err := netns.LoadTopology("../../testbed/degrade10.json")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	summary(&b, []netns.Topology{topo}, recs)
	for _, row := range []string{
		"| degrade10 | halo | **cold start** | 3.000 | 1.000 | 3.00 | 6.000 | 50.0 % |",
		"| degrade10 | lammps | steady | 2.000 | 2.000 | 1.00 | 4.000 | 50.0 % |",
		"| degrade10 | halo | steady, after change 1 | 4.000 | 2.000 | 2.00 | 8.000 | 50.0 % |",
	} {
		if !strings.Contains(b.String(), row) {
			t.Errorf("summary lacks %q:\n%s", row, b.String())
		}
	}
	if good, n := asGood(recs[:6], recs[:6], "netload"); good != 0 || n != 2 {
		t.Errorf("phase 1: netload as good as the oracle %d of %d, want 0 of 2", good, n)
	}
}

// Every rank starts in a session, and so an autogroup, of its own, by
// default and on every group: the noise fix of docs/design/experiment.md,
// "Run-to-run noise". The wrapper runs for real and the wrapped process
// reads its own session and autogroup.
func TestRanksRunInSessionsOfTheirOwn(t *testing.T) {
	t.Parallel()
	if !defaultRankSessions {
		t.Fatal("-rank-sessions is off by default: the head node's rank shares an autogroup with the agents, the others have one each")
	}
	argv := inSession([]string{"sh", "-c", `echo $$ $(cut -d' ' -f6 /proc/$$/stat) $(cat /proc/$$/autogroup 2>/dev/null || echo none)`}, true)
	var outs []string
	for range 2 {
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		f := strings.Fields(string(out))
		if len(f) < 3 || f[0] != f[1] {
			t.Fatalf("%v: pid, session, autogroup %q: want the process to lead its session", argv, out)
		}
		outs = append(outs, f[2])
	}
	own, _ := os.ReadFile("/proc/self/autogroup")
	if ownAG := strings.Fields(string(own)); len(ownAG) > 0 && outs[0] != "none" {
		if outs[0] == ownAG[0] || outs[0] == outs[1] {
			t.Errorf("autogroups: test %s, ranks %v: want one of its own per rank", ownAG[0], outs)
		}
	}
	apps, err := buildApps(config{apps: []string{"halo"}, halo: "/bin/true", rankSessions: true, mpi: "openmpi"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if a := apps[0].argv; len(a) < 3 || a[0] != "setsid" || a[2] != "/bin/true" {
		t.Errorf("halo's argv %v: want it behind setsid", a)
	}
	if a := inSession([]string{"x"}, false); !reflect.DeepEqual(a, []string{"x"}) {
		t.Errorf("inSession(x, false) = %v, want x as it is", a)
	}
}
