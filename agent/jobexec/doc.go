// Package jobexec starts a job's processes as their owner, through a small
// helper that the agent's own executable becomes when it is started under
// the name Arg0.
//
// The agent runs as root; a job must not. Everything that is set up for a
// job process happens in the helper, in this order, before it executes the
// job: it joins the job's cgroup (Spec.Cgroup, so that every process the
// job starts is born inside it; on cgroup v2 the helper itself is started
// inside it, and only checks that it is), its resource limits and OOM
// score are reset to the site's job defaults (joining a cgroup, raising a
// hard limit or an OOM score need root, so these come first), it takes the
// owner's identity with the owner's supplementary groups (setgroups,
// setgid, setuid, as initgroups(3) would), and only then, as that user,
// does it create directories the job needs and enter the job's working
// directory. A path the user chose is therefore only ever
// touched with the user's own permissions: a symlink planted in it leads
// nowhere the user could not go anyway.
//
// The agent side:
//
//	cmd := jobexec.Command(exe, spec, argv) // Args[0] == Arg0
//	cmd.Env, cmd.Stdout = ...
//	err := jobexec.Start(cmd)               // returns once the job is running, or why it is not
//	err = jobexec.Run(exe, spec)            // no argv: only the filesystem work, as the user
//
//	w, err := jobexec.StartWarm(exe, spec)  // ahead of the command: cgroup, limits, then it waits
//	wait, err := w.Start(cmd)               // cmd made by Command with the same spec; wait, not cmd.Wait
//
// A warm helper (warm.go) takes the command, its environment and its
// standard streams (as descriptors) on a socket only the agent holds, and
// refuses a command of another spec; from the identity change on it does
// what a helper started with the command does.
//
// The helper reports why it could not start the job on a status pipe (fd 3,
// close-on-exec), the way os/exec reports a failed execve: a successful exec
// closes the pipe, so Start reads either nothing or the reason.
//
// The agent starts the helper from /proc/self/exe unless it is configured
// with a shoal binary (Config.Bin, which it already runs as root for its
// probes; in-process test clusters set it so that the helper is the plain
// shoal binary rather than a race-instrumented test binary, whose start
// costs ten times more). With a binary, it starts the helper from the
// small shoal-exec beside it when there is one as safe to run as root
// (cmd/shoal-exec, jobrun.ExecBin): the helper is started once per job
// process, and that binary starts in a fraction of the whole agent's
// time. /proc/self/exe works in every binary that links the agent, and a
// shoal binary replaced on disk under a running agent cannot change what
// runs as root. The dispatch is a package init function: it looks only at
// os.Args[0], which only the agent sets to Arg0, and the helper can do
// nothing its caller could not do.
package jobexec
