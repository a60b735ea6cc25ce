package injob

import (
	"slices"
	"testing"
)

// TestParseRshSkipsSSHOptions: launchers call their remote shell as ssh,
// with options before the host; rsh skips them as ssh parses them.
func TestParseRshSkipsSSHOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		host string
		cmd  []string
		err  string
	}{
		{[]string{"-x", "n2", "hostname"}, "n2", []string{"hostname"}, ""},
		{[]string{"-p", "22", "-oBatchMode=yes", "-xT", "n2", "a", "-b"}, "n2", []string{"a", "-b"}, ""},
		{[]string{"-l", "alice", "alice@n3", "--", "x"}, "n3", []string{"--", "x"}, ""},
		{[]string{"--", "-n4", "x"}, "-n4", []string{"x"}, ""},
		{[]string{"-p"}, "", nil, "option -p needs an argument"},
		{[]string{"-x"}, "", nil, "no host given"},
		{[]string{"n2"}, "", nil, "no command for n2: shoal rsh runs commands, not shells"},
	} {
		host, cmd, err := ParseRsh(tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || host != tc.host || !slices.Equal(cmd, tc.cmd) {
			t.Errorf("%q: host %q, command %q, %v; want %q, %q", tc.args, host, cmd, err, tc.host, tc.cmd)
		}
	}
}
