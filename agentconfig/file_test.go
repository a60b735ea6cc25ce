package agentconfig

import (
	"errors"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

func TestParseGoodFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path, src string
		check           func(a Agent) bool
	}{
		{"every kind", "shoal.hcl", `
data_dir = "/var/lib/shoal"   # a comment
token_file = "/etc/shoal/token"
join = ["node1", "node2:7946"]
gossip_port = 8000
log_json = true
job_retention = "1h"
probe_budget = "2GiB"
bandwidth_bytes = 1000000
pe = ["fpga=2"]
job_rlimit = ["nofile=4096:8192"]
log_level = "debug"
`, func(a Agent) bool {
			c := a.Config
			return c.DataDir == "/var/lib/shoal" && a.TokenFile == "/etc/shoal/token" &&
				reflect.DeepEqual(c.Join, []string{"node1", "node2:7946"}) && c.GossipPort == 8000 &&
				a.LogJSON && c.JobRetention == time.Hour && c.Probes.Budget == 2<<30 &&
				c.Probes.BandwidthBytes == 1e6 && reflect.DeepEqual(c.PEs, []nodestate.PE{{Kind: "fpga", Count: 2}}) &&
				len(c.JobLimits) == 1 && a.LogLevel == slog.LevelDebug
		}},
		{"empty file keeps the defaults", "empty.hcl", "", func(a Agent) bool {
			return reflect.DeepEqual(a.Config, Default().Config)
		}},
		{"json", "shoal.json", `{"data_dir": "/d", "join": ["a"], "raft_port": 9000}`, func(a Agent) bool {
			return a.Config.DataDir == "/d" && a.Config.RaftPort == 9000 && len(a.Config.Join) == 1
		}},
		{"zero retention keeps jobs", "z.hcl", `job_retention = "0"`, func(a Agent) bool {
			return a.Config.JobRetention == 0
		}},
	}
	for _, tc := range cases {
		f, err := Parse(tc.path, []byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		a := Default()
		if err := a.ApplyFile(f); err != nil {
			t.Errorf("%s: apply: %v", tc.name, err)
			continue
		}
		if !tc.check(a) {
			t.Errorf("%s: wrong settings: %+v", tc.name, a)
		}
	}
}

// Every bad file is refused with FILE:LINE: KEY: what is wrong (or
// FILE:LINE: for syntax, which has no key).
func TestParseBadFiles(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, src, want string }{
		{"unknown key", "data_dir = \"/d\"\ndatadir = \"/d\"", `c.hcl:2: datadir: unknown key; did you mean data_dir?`},
		{"dashes", `data-dir = "/d"`, `c.hcl:1: data-dir: unknown key; did you mean data_dir?`},
		{"far from any key", `colour = "blue"`, `c.hcl:1: colour: unknown key`},
		{"string for int", "\n\nhttp_port = \"80\"", `c.hcl:3: http_port: want a whole number, got the string "80"`},
		{"fraction", `http_port = 80.5`, `c.hcl:1: http_port: want a whole number`},
		{"number for duration", `job_retention = 3600`, `c.hcl:1: job_retention: want a duration such as "3s" or "5m", got the number 3600`},
		{"bad duration", `sample_interval = "3 sec"`, `c.hcl:1: sample_interval: "3 sec" is not a duration`},
		{"bad size", `probe_budget = "lots"`, `c.hcl:1: probe_budget: "lots" is not a size`},
		{"string for list", `join = "node1"`, `c.hcl:1: join: want a list of strings`},
		{"number in list", `join = ["a", 3]`, `c.hcl:1: join: want a list of strings`},
		{"bad join", `join = [":7946"]`, `c.hcl:1: join: ":7946": no host`},
		{"bad ip", `bind = "1.2.3"`, `c.hcl:1: bind: "1.2.3" is not an IP address`},
		{"bad pe", `pe = ["gpu=many"]`, `c.hcl:1: pe: `},
		{"bad rlimit", `job_rlimit = ["files=10"]`, `c.hcl:1: job_rlimit: `},
		{"bad log level", `log_level = "loud"`, `c.hcl:1: log_level: "loud": use debug, info, warn or error`},
		{"bool as string", `log_json = "yes"`, `c.hcl:1: log_json: want true or false`},
		{"null", `name = null`, `c.hcl:1: name: want a string, got null`},
		{"variable", `data_dir = home`, `c.hcl:1: data_dir: Variables not allowed`},
		{"block", "tls {\n ca_file = \"x\"\n}", `c.hcl:1: Unexpected "tls" block`},
		{"twice", "bind = \"1.1.1.1\"\nbind = \"2.2.2.2\"", `c.hcl:2: Attribute redefined`},
		{"syntax", `data_dir = "/d`, `c.hcl:1: `},
	}
	for _, tc := range cases {
		_, err := Parse("c.hcl", []byte(tc.src))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %q\nwant %q...", tc.name, err, tc.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", tc.name, err)
		}
	}
}

// A bound broken by one key alone is reported at its line; one broken by
// two keys together names the file.
func TestValidateNamesTheSource(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, src, want string }{
		{"one key", "data_dir = \"/d\"\ntoken_file = \"t\"\nsample_interval = \"1ns\"", `c.hcl:3: sample_interval: sample interval 1ns is below 10ms`},
		{"one key, negative", "data_dir = \"/d\"\ntoken_file = \"t\"\n\nmax_queued_jobs = -1", `c.hcl:4: max_queued_jobs: `},
		{"two keys", "data_dir = \"/d\"\ntoken_file = \"t\"\ngossip_port = 9000\nraft_port = 9000", `gossip, raft and http ports must differ`},
		{"no data dir", `token_file = "t"`, `no data dir: set data_dir in the config file or pass --data-dir DIR`},
	}
	for _, tc := range cases {
		f, err := Parse("c.hcl", []byte(tc.src))
		if err != nil {
			t.Errorf("%s: parse: %v", tc.name, err)
			continue
		}
		a := Default()
		if err := a.ApplyFile(f); err != nil {
			t.Errorf("%s: apply: %v", tc.name, err)
			continue
		}
		a.Config.Name, a.Config.Token = "n", "t"
		err = a.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q...", tc.name, err, tc.want)
		}
	}
	// Voters before bootstrap_expect: the file is consistent as a whole.
	if _, err := fromFile(t, "data_dir = \"/d\"\ntoken_file = \"t\"\nvoters = 1\nbootstrap_expect = 1"); err != nil {
		t.Fatalf("voters = 1 with bootstrap_expect = 1 refused: %v", err)
	}
}

func TestFlagsOverrideFile(t *testing.T) {
	t.Parallel()
	f, err := Parse("c.hcl", []byte("data_dir = \"/file\"\nhttp_port = 9000\njoin = [\"a\", \"b\"]"))
	if err != nil {
		t.Fatal(err)
	}
	a := Default()
	if err := a.ApplyFile(f); err != nil {
		t.Fatal(err)
	}
	if err := a.SetFlag("http-port", Value{Int: 9100}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetFlag("join", Value{Strs: []string{"c"}}); err != nil {
		t.Fatal(err)
	}
	if a.Config.DataDir != "/file" || a.Config.HTTPPort != 9100 || !reflect.DeepEqual(a.Config.Join, []string{"c"}) {
		t.Fatalf("got data dir %q, http port %d, join %v", a.Config.DataDir, a.Config.HTTPPort, a.Config.Join)
	}
	if w := a.Where("http-port"); w != "--http-port" {
		t.Errorf("Where(http-port) = %q", w)
	}
	if w := a.Where("data-dir"); w != "c.hcl:1: data_dir" {
		t.Errorf("Where(data-dir) = %q", w)
	}
	err = a.SetFlag("bind", Value{Str: "nope"})
	var ce *Error
	if !errors.As(err, &ce) || err.Error() != `--bind: "nope" is not an IP address` {
		t.Errorf("bad flag: %v", err)
	}
}

// The packaged /etc/shoal/shoal.hcl parses, documents every key, and each
// commented line that states a default states the real one.
func TestPackagedConfig(t *testing.T) {
	t.Parallel()
	const path = "../packaging/shoal.hcl"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(path, src)
	if err != nil {
		t.Fatalf("as shipped: %v", err)
	}
	if got := f.Keys(); !reflect.DeepEqual(got, []string{"data_dir", "token_file", "socket"}) {
		t.Errorf("keys set as shipped: %v", got)
	}
	commented := regexp.MustCompile(`(?m)^# ([a-z_]+ = .*)$`)
	examples := map[string]bool{"join": true, "name": true, "advertise": true, "voters": true, "socket": true,
		"tls_ca_file": true, "tls_cert_file": true, "tls_key_file": true, "pe": true, "switch": true, "feature": true, "job_rlimit": true}
	seen := map[string]bool{}
	for _, m := range commented.FindAllStringSubmatch(string(src), -1) {
		line := m[1]
		one, err := Parse(path, []byte(line))
		if err != nil {
			t.Errorf("commented %q: %v", line, err)
			continue
		}
		key := one.Keys()[0]
		seen[key] = true
		if examples[key] {
			continue
		}
		a := Default()
		if err := a.ApplyFile(one); err != nil {
			t.Errorf("commented %q: %v", line, err)
			continue
		}
		if d := Default(); !reflect.DeepEqual(a.Config, d.Config) || a.LogLevel != d.LogLevel || a.LogJSON != d.LogJSON || a.JoinTimeout != d.JoinTimeout {
			t.Errorf("commented %q is not the default", line)
		}
	}
	for _, k := range Keys() {
		if !seen[k.Name()] && k.Name() != "data_dir" && k.Name() != "token_file" && k.Name() != "socket" {
			t.Errorf("key %s is not in %s", k.Name(), path)
		}
	}
}

func TestChanged(t *testing.T) {
	t.Parallel()
	load := func(src string) Agent {
		t.Helper()
		f, err := Parse("c.hcl", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		a := Default()
		if err := a.ApplyFile(f); err != nil {
			t.Fatal(err)
		}
		return a
	}
	old := load("data_dir = \"/d\"\nlog_level = \"info\"\njoin = [\"a\"]\nprobe_budget = \"1GiB\"")
	cases := []struct {
		src  string
		want []string
	}{
		{"data_dir = \"/d\"\nlog_level = \"info\"\njoin = [\"a\"]\nprobe_budget = \"1GiB\"", nil},
		{"data_dir = \"/d\"\njoin = [\"a\"]", nil}, // info and 1GiB are the defaults
		{"data_dir = \"/d\"\nlog_level = \"debug\"\njoin = [\"a\"]\nprobe_budget = \"1GiB\"", []string{"log_level"}},
		{"data_dir = \"/e\"\njoin = [\"a\", \"b\"]\nprobe_budget = \"1073741824\"", []string{"data_dir", "join"}},
	}
	for _, tc := range cases {
		n := load(tc.src)
		if got := old.Changed(&n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: changed %v, want %v", tc.src, got, tc.want)
		}
	}
}

// fromFile is an agent's settings from the config file src (name n, token
// t), validated: the validation's error, or the test fails on src's
// parse or apply.
func fromFile(t *testing.T, src string) (Agent, error) {
	t.Helper()
	f, err := Parse("c.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	a := Default()
	a.Config.Name, a.Config.Token = "n", "t"
	if err := a.ApplyFile(f); err != nil {
		t.Fatal(err)
	}
	return a, a.Validate()
}
