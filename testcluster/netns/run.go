package netns

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// run executes a host tool (ip, tc) and returns its stdout; the error names
// the command line and carries its stderr.
func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", cmdline(name, args), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func cmdline(name string, args []string) string {
	return strings.Join(append([]string{name}, args...), " ")
}
