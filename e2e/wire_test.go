package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// TestWire_NoTokenOrSecretInCapture captures every packet of every node
// (all interfaces of each node's namespace: lo carries the CLI's and
// `shoal rsh`'s calls to their own agent, eth0 everything between agents)
// while a job submitted on a non-leader with --env SECRET=<random> runs
// a command on another node through `shoal rsh` and `shoal logs` on a node
// other than the job's head relays its output. Neither the cluster token
// nor the secret may appear anywhere in the capture.
func TestWire_NoTokenOrSecretInCapture(t *testing.T) {
	skipUnlessEnabled(t)
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump not installed (make deps)")
	}
	l, leader := fiveNodes(t)
	from := other(l.Nodes(), leader)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	var caps []*netns.Process
	for _, n := range l.Nodes() {
		f := filepath.Join(dir, n+".pcap")
		// --immediate-mode: every packet reaches the file before tcpdump
		// is stopped (otherwise the last buffered block is lost).
		p, err := l.TB.Start(t.Context(), n, []string{"tcpdump", "--immediate-mode", "-i", "any", "-U", "-s", "0", "-w", f}, nil)
		if err != nil {
			t.Fatalf("tcpdump on %s: %v", n, err)
		}
		caps = append(caps, p)
		if err := lab.WaitFor(t.Context(), 20*time.Second, "tcpdump on "+n+" to open its file", func(context.Context) error {
			if st, err := os.Stat(f); err != nil || st.Size() < 24 {
				return fmt.Errorf("no pcap header in %s yet", f)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	b := make([]byte, 16)
	rand.Read(b)
	secret := "s3cret-" + hex.EncodeToString(b)
	// Rank 0 asks the other node of the allocation, through shoal rsh, to
	// print the secret from the job's environment there.
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
[ "$SHOAL_RANK" = 0 ] || exit 0
for h in $(echo "$SHOAL_HOSTS" | tr , ' '); do
  [ "$h" = "$SHOAL_NODE" ] || exec %s rsh "$h" 'echo "remote $SHOAL_NODE says $SECRET"'
done
echo "no other host in $SHOAL_HOSTS" >&2
exit 1
`, shoalBin(t))), 0o755)

	out, err := l.Shoal(ctxFor(t, time.Minute), from, "submit", "-n", "2", "--ppn", "1", "--force", "--mpi", "none",
		"--env", "SECRET="+secret, "--", "/bin/sh", script)
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q, want a job ID", out)
	}
	var head, failed string
	if err := lab.WaitFor(t.Context(), 2*time.Minute, fmt.Sprintf("job %d to finish", id), func(ctx context.Context) error {
		j, err := l.Job(ctx, from, id)
		if err != nil {
			return err
		}
		switch j.State {
		case "done":
			head = j.Attempts[len(j.Attempts)-1].Head
			return nil
		case "failed", "killed":
			failed = fmt.Sprintf("job %d %s: %+v", id, j.State, j.Attempts)
			return nil
		}
		return fmt.Errorf("job %d is %s", id, j.State)
	}); err != nil {
		t.Fatal(err)
	}
	if failed != "" {
		t.Fatal(failed)
	}
	relay := other(l.Nodes(), head)
	logs, err := l.Shoal(ctxFor(t, time.Minute), relay, "logs", strconv.FormatUint(id, 10))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs, "says "+secret) {
		t.Fatalf("shoal logs on %s (head %s) printed %q, want the remote node's line with the secret", relay, head, logs)
	}
	t.Logf("job %d submitted on %s (leader %s), head %s, logs relayed by %s: %s", id, from, leader, head, relay, strings.TrimSpace(logs))

	for _, p := range caps {
		if err := p.Stop(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := os.ReadFile(l.TokenFile())
	if err != nil {
		t.Fatal(err)
	}
	token := bytes.TrimSpace(tok)
	var total int
	for _, n := range l.Nodes() {
		data, err := os.ReadFile(filepath.Join(dir, n+".pcap"))
		if err != nil {
			t.Fatal(err)
		}
		total += len(data)
		t.Logf("capture on %s: %d bytes", n, len(data))
		if len(data) < 8<<10 {
			t.Errorf("capture on %s has only %d bytes: it missed the traffic", n, len(data))
		}
		if bytes.Contains(data, token) {
			t.Errorf("the cluster token crossed the wire in clear (capture on %s)", n)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the job's --env secret crossed the wire in clear (capture on %s)", n)
		}
	}
	t.Logf("searched %d bytes of capture on %d nodes", total, len(l.Nodes()))
}
