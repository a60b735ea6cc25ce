package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// hostProc prepares node's HOST_PROC directory: a link to every entry of
// the real /proc except the process directories and loadavg, which holds
// the node's hog count as its 1-, 5- and 15-minute load (the host's
// loadavg is shared by every namespace and says nothing about the node).
// The links resolve in the reader's namespaces, so net/dev still shows the
// node's own interfaces.
func (l *Lab) hostProc(node string) (string, error) {
	dir := filepath.Join(l.dir, "proc", node)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("host proc for %s: %w", node, err)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return "", fmt.Errorf("host proc for %s: %w", node, err)
	}
	for _, e := range ents {
		name := e.Name()
		if _, err := strconv.Atoi(name); err == nil || name == "loadavg" {
			continue
		}
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("/proc", name), link); err != nil {
			return "", fmt.Errorf("host proc for %s: %w", node, err)
		}
	}
	load := l.ReportedLoad(node)
	content := fmt.Sprintf("%.2f %.2f %.2f 1/100 1\n", load, load, load)
	if err := os.WriteFile(filepath.Join(dir, "loadavg"), []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("host proc for %s: %w", node, err)
	}
	return dir, nil
}

// ReportedLoad is the load average node's agent reads: its hogs plus the
// background load the topology gives it (netns.Node.Load).
func (l *Lab) ReportedLoad(node string) float64 {
	load := float64(l.HogWorkers(node))
	for _, n := range l.TB.Topology().Nodes {
		if n.Name == node {
			load += n.Load
		}
	}
	return load
}

// HogWorkers is the number of CPU hogs the topology puts on node.
func (l *Lab) HogWorkers(node string) int {
	n := 0
	for _, h := range l.TB.Topology().Hogs {
		if h.Node == node {
			n += h.Workers
		}
	}
	return n
}
