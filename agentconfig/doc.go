// Package agentconfig reads the settings of `shoal agent` from a config file
// and from the command line into one agent.Config.
//
// The file is HCL, as Nomad's and Consul's are (JSON when its name ends in
// .json). Every agent flag is a key, spelt with underscores: --data-dir is
// data_dir, --job-rlimit is job_rlimit. Repeatable flags take a list.
//
//	data_dir   = "/var/lib/shoal"
//	token_file = "/etc/shoal/token"
//	join       = ["node1", "node2"]
//	probe_budget = "2GiB"
//
// Flags (and their SHOAL_* environment variables) override the file, which
// overrides the defaults:
//
//	a := agentconfig.Default()
//	f, err := agentconfig.Load("/etc/shoal/shoal.hcl")
//	if err == nil { err = a.ApplyFile(f) }
//	if err == nil { err = a.SetFlag("bind", agentconfig.Value{Str: "10.0.0.5"}) }
//	if err == nil { err = a.Validate() }
//
// An unknown key, a value of the wrong type and a value out of bounds are
// refused with the file, the line and the key ("shoal.hcl:3: bind: \"x\" is
// not an IP address"); a problem between several keys (two equal ports)
// names the file.
//
// The package parses with hclparse and walks the attributes itself rather
// than decoding into a struct with gohcl: one table of keys serves the file
// and the flags alike, and each value keeps its source range until its
// domain checks (IP, size, rlimit, ...) have run, which gohcl's decoding
// loses.
package agentconfig
