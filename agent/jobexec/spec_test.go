package jobexec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRlimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    Rlimit
		wantErr string
	}{
		{in: "nofile=1024:4096", want: Rlimit{"nofile", 1024, 4096}},
		{in: "nofile=4096", want: Rlimit{"nofile", 4096, 4096}},
		{in: "core=0:unlimited", want: Rlimit{"core", 0, Infinity}},
		{in: "memlock=unlimited", want: Rlimit{"memlock", Infinity, Infinity}},
		{in: "nofile", wantErr: "want RESOURCE=SOFT[:HARD]"},
		{in: "files=10", wantErr: `unknown resource "files"`},
		{in: "nofile=ten", wantErr: "soft limit"},
		{in: "nofile=10:x", wantErr: "hard limit"},
		{in: "nofile=10:5", wantErr: "soft limit above the hard limit"},
	} {
		got, err := ParseRlimit(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseRlimit(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRlimit(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, err := ParseRlimit(got.String()); err != nil || back != got {
			t.Errorf("ParseRlimit(%q.String()) = %v, %v", tc.in, back, err)
		}
	}
}

const procLimits = `Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max stack size            8388608              unlimited            bytes     
Max processes             96365                96365                processes 
Max open files            1048576              1048576              files     
Max realtime timeout      unlimited            unlimited            us        
`

func TestSystemLimitsCapOpenFiles(t *testing.T) {
	t.Parallel()
	got, err := SystemLimits(procLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rlimit{{"cpu", Infinity, Infinity}, {"stack", 8388608, Infinity}, {"nproc", 96365, 96365},
		{"nofile", DefaultNofileSoft, 1048576}, {"rttime", Infinity, Infinity}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SystemLimits = %v, want %v", got, want)
	}
	if _, err := SystemLimits("Max open files  lots\n"); err == nil {
		t.Error("a line without a hard value parsed")
	}
	if _, err := SystemLimits(""); err == nil {
		t.Error("no limits at all parsed")
	}
}

func TestMergeLimitsSiteWins(t *testing.T) {
	t.Parallel()
	got := MergeLimits([]Rlimit{{"nproc", 10, 10}, {"nofile", 1024, 4096}}, []Rlimit{{"nofile", 8, 16}, {"core", 0, 0}})
	want := []Rlimit{{"core", 0, 0}, {"nofile", 8, 16}, {"nproc", 10, 10}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("MergeLimits = %v, want %v", got, want)
	}
}
