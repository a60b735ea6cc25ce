// Package probe measures a node and the network between nodes; the plans
// of which nodes test which, and when, are probeplan's.
//
// It is split into a pure core and a thin shell. The core takes data and
// time as arguments: running means (Tracker), PE parsing (ParsePEFlag,
// ParseNvidiaSMI, ScanDRM over an fs.FS), the ELF scan of a job's
// executable (ScanELF) and of an interpreted program's MPI binding
// (ScanProgram, which reads files and never runs them).
// The shell touches the machine through small interfaces: Sampler
// (HostSampler on gopsutil), HostInventory (GopsutilInventory), NVML
// (NewNVML over go-nvml, which needs cgo; FakeNVML, the fake tests use on
// machines without a GPU) and Runner (ExecRunner for nvidia-smi, asked
// where NVML cannot be loaded); ScanNVML, the enumeration of GPUs and MIG
// instances, is core over NVML. The probe server and the pinger measure
// bandwidth and RTT. probe imports nothing else of shoal but probeplan's
// budget; the agent converts its types.
//
// The node-state loop of an agent (seed 002 §4, NodeStateD):
//
//	st, err := probe.ScanStatic(ctx, probe.StaticConfig{Declared: declared})
//	if err != nil { ... }
//	s, tr := probe.NewHostSampler(), probe.NewTracker()
//	for range ticker.C { // every --sample-interval, 3 s by default
//		raw, err := s.Sample(ctx)
//		if err != nil { log; continue }
//		dyn := tr.Add(raw) // latest values with 1/5/15-minute means
//		publish(st, dyn)   // gossip
//	}
//
// Job PE needs when a job declares no --pe (seed 001: scan the program for PE libraries):
//
//	info, err := probe.ScanELF(path)
//	if errors.Is(err, probe.ErrNotELF) { ... } // a script: no libraries to read
//	needsGPU, flavour := info.NeedsGPU(), info.MPI // "mpich", "openmpi" or ""
//
// and for any command line (python3 -m mpi4py..., Rscript, julia, #! and
// shell wrappers), with its MPI "" when it cannot be told:
//
//	prog, err := probe.ScanProgram(argv, probe.ProgramEnv{Getenv: get, Workdir: wd})
package probe
