package confine

import (
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{in: "64M", want: 64 << 20},
		{in: "64m", want: 64 << 20},
		{in: "2G", want: 2 << 30},
		{in: "1T", want: 1 << 40},
		{in: "512K", want: 512 << 10},
		{in: "100", want: 100 << 20}, // a plain number is megabytes, as in Slurm
		{in: "0", wantErr: `--mem "0": must be more than zero`},
		{in: "0G", wantErr: "must be more than zero"},
		{in: "lots", wantErr: `--mem "lots": not a size; want a whole number of megabytes or one with a K, M, G or T suffix, e.g. 64M or 2G`},
		{in: "", wantErr: "not a size"},
		{in: "G", wantErr: "not a size"},
		{in: "-1", wantErr: "not a size"},
		{in: "1.5G", wantErr: "not a size"},
		{in: "64MB", wantErr: "not a size"},
		{in: " 64M", wantErr: "not a size"},
		{in: "8388608T", wantErr: "too large"},
		{in: "99999999999999999999", wantErr: "too large"},
	} {
		got, err := ParseSize("--mem", tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseSize(%q) = %d, %v; want one line with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if back, err := ParseSize("--mem", FormatSize(got)); err != nil || back != got {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", got, FormatSize(got), back, err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[uint64]string{
		64 << 20:              "64M",
		3 << 30:               "3G",
		1536 << 20:            "1.5G",
		100<<20 + 300<<10 + 5: "100.3M",
		2047:                  "2.0K",
		512:                   "512B",
		0:                     "0B",
	} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Parent = "" }, "want a clean path"},
		{func(c *Config) { c.Parent = "/" }, "want a clean path"},
		{func(c *Config) { c.Parent = "../x" }, "want a clean path"},
		{func(c *Config) { c.Parent = "a//b" }, "want a clean path"},
		{func(c *Config) { c.Parent = "/sys/fs/cgroup/memory/shoal" }, "not its directory"},
		{func(c *Config) { c.Hierarchy = "v3" }, `hierarchy "v3"`},
		{func(c *Config) { c.CPUPeriod = time.Microsecond }, "between 1ms and 1s"},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c, err, tc.want)
		}
	}
	for _, p := range []string{"shoal", "/shoal", "site/shoal"} {
		c := DefaultConfig()
		c.Parent = p
		if err := c.Validate(); err != nil {
			t.Errorf("parent %q: %v", p, err)
		}
	}
}

func TestCPUQuota(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cpus          float64
		period, quota int64
	}{{1, 100000, 100000}, {2, 100000, 200000}, {0.5, 100000, 50000}, {0.001, 100000, 1000}} {
		p, q := cpuQuota(100*time.Millisecond, tc.cpus)
		if int64(p) != tc.period || q != tc.quota {
			t.Errorf("cpuQuota(%v) = %d, %d; want %d, %d", tc.cpus, p, q, tc.period, tc.quota)
		}
	}
}
