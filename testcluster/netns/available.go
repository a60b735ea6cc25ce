package netns

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// tools every testbed needs on PATH.
var requiredTools = []string{"ip", "tc", "nsenter", "unshare", "mount", "umount", "hostname", "sh"}

var availableOnce = sync.OnceValues(checkAvailable)

// Available reports whether this host can run a testbed: root, iproute2
// (ip, tc), util-linux (nsenter, unshare, mount), and permission to create a network
// namespace (probed once by creating and deleting one). why says what is
// missing, on one line, for t.Skip.
func Available() (ok bool, why string) {
	return availableOnce()
}

func checkAvailable() (bool, string) {
	if os.Geteuid() != 0 {
		return false, fmt.Sprintf("not root (euid %d)", os.Geteuid())
	}
	var missing []string
	for _, tool := range requiredTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		return false, "missing on PATH: " + strings.Join(missing, ", ")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Outside Family, so no concurrent Sweep ever takes it for a leftover.
	probe := fmt.Sprintf("shoalprobe-%d", os.Getpid())
	if _, err := run(ctx, "ip", "netns", "add", probe); err != nil {
		return false, fmt.Sprintf("cannot create a network namespace: %v", err)
	}
	if _, err := run(ctx, "ip", "netns", "del", probe); err != nil {
		return false, fmt.Sprintf("cannot delete a network namespace: %v", err)
	}
	return true, ""
}
