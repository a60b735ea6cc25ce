package slurm

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
)

// Config is what changes between runs of one cluster: the topology and
// the node weights slurmctld places with.
type Config struct {
	// Topology is topology.conf for topology/tree; "" runs Slurm without a
	// topology plugin (its default placement).
	Topology string
	// Weights are node weights (slurm.conf Weight=, lowest taken first);
	// nodes not listed keep Slurm's default of 1.
	Weights map[string]int
	// Extra lines for slurm.conf, e.g. SchedulerParameters for Slurm's
	// high-throughput settings.
	Extra []string
}

// Node is one slurmd.
type Node struct {
	Name string
	Addr netip.Addr
	CPUs int
}

// slurmConf renders slurm.conf for the cluster in dir, controller first in
// nodes.
func slurmConf(dir string, nodes []Node, cfg Config) string {
	var b strings.Builder
	ctl := nodes[0]
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	p("# slurm.conf written by shoal's testcluster/slurm")
	p("ClusterName=shoaltb")
	p("SlurmctldHost=%s(%s)", ctl.Name, ctl.Addr)
	p("AuthType=auth/munge")
	p("CredType=cred/munge")
	p("AuthInfo=socket=%s", filepath.Join(dir, "munge", "munge.socket"))
	p("SlurmUser=root")
	p("SlurmdUser=root")
	p("SlurmctldPort=6817")
	p("SlurmdPort=6818")
	p("StateSaveLocation=%s", filepath.Join(dir, "ctld"))
	p("SlurmdSpoolDir=%s", filepath.Join(dir, "spool", "%n"))
	p("SlurmctldPidFile=%s", filepath.Join(dir, "slurmctld.pid"))
	p("SlurmdPidFile=%s", filepath.Join(dir, "slurmd-%n.pid"))
	p("SlurmctldLogFile=%s", filepath.Join(dir, "slurmctld.log"))
	p("SlurmdLogFile=%s", filepath.Join(dir, "slurmd-%n.log"))
	p("SlurmctldDebug=info")
	p("SlurmdDebug=info")
	p("SelectType=select/cons_tres")
	p("SelectTypeParameters=CR_Core")
	p("ProctrackType=proctrack/linuxproc")
	p("TaskPlugin=task/none")
	p("JobAcctGatherType=jobacct_gather/none")
	p("AccountingStorageType=accounting_storage/none")
	p("JobCompType=jobcomp/none")
	p("MpiDefault=none")
	p("SwitchType=switch/none")
	p("ReturnToService=2")
	p("SlurmdParameters=config_overrides")
	// No prolog, epilog or plugstack of the host's /etc/slurm.
	p("PlugStackConfig=%s", filepath.Join(dir, "plugstack.conf"))
	if cfg.Topology != "" {
		p("TopologyPlugin=topology/tree")
	} else {
		p("TopologyPlugin=topology/none")
	}
	for _, l := range cfg.Extra {
		p("%s", l)
	}
	for _, n := range nodes {
		w := ""
		if v, ok := cfg.Weights[n.Name]; ok {
			w = fmt.Sprintf(" Weight=%d", v)
		}
		p("NodeName=%s NodeAddr=%s NodeHostname=%s CPUs=%d RealMemory=1000 State=UNKNOWN%s", n.Name, n.Addr, n.Name, max(n.CPUs, 1), w)
	}
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	p("PartitionName=all Nodes=%s Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO", strings.Join(names, ","))
	return b.String()
}
