package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseDirectives(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		want         []string
		found        bool
		err          string
	}{
		{name: "flags in order", script: "#!/bin/sh\n#SHOAL -n 16 --ppn 4\n# a comment\n\n#SHOAL -J relax --mem-less\n", err: "job.sh:5: unknown flag --mem-less"},
		{name: "stop at the first command", script: "#!/bin/sh\n#SHOAL -n 4 -J 'my job'\necho hi\n#SHOAL --bogus\n", want: []string{"-n", "4", "-J", "my job"}, found: true},
		{name: "quotes and comments", script: "#!/bin/bash\n#SHOAL --env \"A=b c\" # trailing comment\n#SHOAL -e err-%j.txt\n", want: []string{"--env", "A=b c", "-e", "err-%j.txt"}, found: true},
		{name: "no directives", script: "#!/bin/sh\necho hi\n", found: false},
		{name: "#SHOALX is a comment", script: "#!/bin/sh\n#SHOALX -n 3\n#SHOAL -n 2\n", want: []string{"-n", "2"}, found: true},
		{name: "unknown short flag", script: "#!/bin/sh\n#SHOAL -n 2\n#SHOAL -Q\n", err: "job.sh:3: unknown flag -Q"},
		{name: "bad value", script: "#!/bin/sh\n#SHOAL --ppn four\n", err: "job.sh:2: invalid value \"four\""},
		{name: "positional", script: "#!/bin/sh\n#SHOAL -n 2 ./prog\n", err: "job.sh:2: unexpected argument \"./prog\""},
		{name: "unterminated quote", script: "#!/bin/sh\n#SHOAL -J 'relax\n", err: "job.sh:2: unterminated single quote"},
	} {
		got, found, err := parseDirectives("job.sh", strings.NewReader(tc.script))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: err = %v, want one line with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || found != tc.found || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q found %v err %v; want %q found %v", tc.name, got, found, err, tc.want, tc.found)
		}
	}
}

func TestShellWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		` -n 4`:                  {"-n", "4"},
		`-J "a \"b\" c"`:         {"-J", `a "b" c`},
		`-J a\ b`:                {"-J", "a b"},
		`--env 'X=$HOME' # note`: {"--env", "X=$HOME"},
		`--env X=""`:             {"--env", "X="},
		``:                       nil,
	} {
		got, err := shellWords(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestExportEnv(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "HOME=/home/al", "LOADEDMODULES=gcc/12", "SHOAL_TOKEN=secret", "SHOAL_JOB_ID=3"}
	for _, tc := range []struct {
		what string
		want []string
		err  string
	}{
		{what: "ALL", want: []string{"PATH=/bin", "HOME=/home/al", "LOADEDMODULES=gcc/12"}},
		{what: "NONE", want: nil},
		{what: "PATH,LOADEDMODULES", want: []string{"PATH=/bin", "LOADEDMODULES=gcc/12"}},
		{what: "NONE,X=1", want: []string{"X=1"}},
		{what: "ALL,X=1", want: []string{"PATH=/bin", "HOME=/home/al", "LOADEDMODULES=gcc/12", "X=1"}},
		{what: "PATH,ALL", err: "comes first"},
		{what: "=3", err: "no name"},
		{what: "PATH,,HOME", err: "comes first"},
		{what: "ALL,SHOAL_TOKEN", err: "SHOAL_TOKEN is shoal's own"},
		{what: "NONE,SHOAL_TOKEN_FILE", err: "SHOAL_TOKEN_FILE is shoal's own"},
		{what: "SHOAL_KEY_FILE", err: "SHOAL_KEY_FILE is shoal's own"},
		{what: "PATH, SHOAL_JOB_CAP", err: "SHOAL_JOB_CAP is shoal's own"},
		{what: "ALL,SHOAL_ADDR=https://evil:7948", err: "SHOAL_ADDR is shoal's own"},
	} {
		got, err := exportEnv(tc.what, env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("exportEnv(%q) err = %v, want %q", tc.what, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("exportEnv(%q) = %q, %v; want %q", tc.what, got, err, tc.want)
		}
	}
}

// The script's directives go before the command line's flags, so the
// command line wins; --batch is added; a program (not a #! script) or a
// script without directives is left alone.
func TestExpandScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n#SHOAL -n 16 -J relax\nmpiexec ./a.out\n"), 0o755)
	plain := filepath.Join(dir, "plain.sh")
	os.WriteFile(plain, []byte("#!/bin/sh\necho hi\n"), 0o755)
	app := newApp(io.Discard, io.Discard)
	got, err := expandScript(app, []string{"shoal", "submit", "-n", "4", "--", script, "arg"})
	want := []string{"shoal", "submit", "-n", "16", "-J", "relax", "--batch", "-n", "4", "--", script, "arg"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("expandScript = %q, %v; want %q", got, err, want)
	}
	for _, args := range [][]string{
		{"shoal", "submit", "-n", "4", plain},
		{"shoal", "submit", "-n", "4", "--", "/bin/true"},
		{"shoal", "run", "-n", "4", script},
	} {
		if got, err := expandScript(app, args); err != nil || !reflect.DeepEqual(got, args) {
			t.Errorf("expandScript(%q) = %q, %v; want it unchanged", args, got, err)
		}
	}
}
