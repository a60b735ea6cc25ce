package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Slurm's commands as personalities of the one binary: called as sbatch,
// srun, squeue, scancel, sinfo, sacct or scontrol (a link to shoal, in a
// directory a site puts on its users' PATH), or as `shoal slurm NAME`,
// each reads Slurm's options with Slurm's meanings and prints Slurm's
// columns, so that a user's habits and scripts that parse
// `squeue -h -o %i` or `sacct --parsable2` keep working.

// slurmPersonalities are the Slurm commands shoal answers to.
var slurmPersonalities = []string{"sbatch", "srun", "squeue", "scancel", "sinfo", "sacct", "scontrol"}

// slurmCommand is `shoal slurm NAME ...`. sbatch and srun are rewritten
// into submit and run before the app parses anything (slurmRewrite); the
// others read their own options, since Slurm's -h, -o and -n mean what
// shoal's flag parser could not hold beside --help.
func slurmCommand() *cli.Command {
	sub := func(name, usage string, action func(*cli.Context, []string) error, help string) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, Description: help, SkipFlagParsing: true, Flags: clientFlags(),
			Action: func(c *cli.Context) error { return action(c, c.Args().Slice()) },
		}
	}
	return &cli.Command{
		Name:  "slurm",
		Usage: "Slurm's commands (sbatch, srun, squeue, scancel, sinfo, sacct, scontrol) with Slurm's options",
		Description: `Each Slurm command reads Slurm's options with Slurm's meanings and prints
Slurm's columns. Installed as links named after the commands (the package puts
them in /usr/lib/shoal/slurm/bin, for a site to add to its users' PATH where no
real Slurm is), they answer to their own names. The agent to talk to comes from
SHOAL_ADDR and the token or the local socket, as for every shoal command.

Examples:
  shoal slurm sbatch --parsable job.slurm
  shoal slurm squeue --me -h -o "%i %T"
  PATH=/usr/lib/shoal/slurm/bin:$PATH; sbatch job.slurm; squeue; sacct -j 12`,
		Subcommands: []*cli.Command{
			{Name: "sbatch", Usage: "submit a batch script (shoal submit, with sbatch's options)", SkipFlagParsing: true, Description: sbatchHelp,
				Action: func(c *cli.Context) error { writeHelp(c, sbatchHelp); return nil }},
			{Name: "srun", Usage: "run a parallel job (shoal run, with srun's options); a step inside a batch job", SkipFlagParsing: true, Description: srunHelp,
				Action: func(c *cli.Context) error { writeHelp(c, srunHelp); return nil }},
			sub("squeue", "list the jobs that have not ended, in Slurm's columns", squeue, squeueHelp),
			sub("scancel", "cancel jobs", scancel, scancelHelp),
			sub("sinfo", "list the nodes by state", sinfo, sinfoHelp),
			sub("sacct", "list jobs and their steps with accounting", sacct, sacctHelp),
			sub("scontrol", "show jobs and nodes; hold, release or update a queued job", scontrol, scontrolHelp),
		},
	}
}

const sbatchHelp = `sbatch submits a batch script as Slurm's sbatch does: its #SBATCH lines and
the options before the script, with sbatch's meanings (the command line wins
where both set one; see 'shoal submit --help' for the options), and prints
"Submitted batch job ID" (--parsable: the ID alone). Output goes to
slurm-%j.out in the submit directory unless -o says otherwise.

Examples:
  sbatch job.slurm
  sbatch -N 2 --ntasks-per-node=4 -t 30:00 job.slurm input.dat
  jid=$(sbatch --parsable first.slurm); sbatch -d afterok:$jid second.slurm
  sbatch --wrap="hostname"`

const srunHelp = `srun runs a parallel job as Slurm's srun does (shoal run, with srun's
options: -n, -N, --ntasks-per-node, -c, -t, -J, --mem, -w, -x, ...) and waits
for it. Inside a batch job it starts a step on the job's allocation.

Examples:
  srun -N 2 -n 4 ./hello
  srun -n 1 hostname`

// slurmRewrite turns a Slurm personality's command line into shoal's:
// called as NAME (argv[0]'s base name) it is `shoal slurm NAME ...`;
// sbatch becomes submit with the script's directives and the command
// line's options translated (expanded: the script is read already), srun
// becomes run, or a step inside a batch job.
func slurmRewrite(args []string) (out []string, expanded bool, err error) {
	if len(args) > 0 && slices.Contains(slurmPersonalities, filepath.Base(args[0])) {
		args = slices.Concat([]string{"shoal", "slurm", filepath.Base(args[0])}, args[1:])
	}
	if len(args) < 3 || args[1] != "slurm" {
		return args, false, nil
	}
	rest := args[3:]
	wantsHelp := len(rest) > 0 && (rest[0] == "--help" || rest[0] == "--usage")
	switch {
	case args[2] == "sbatch" && !wantsHelp:
		out, err := sbatchSubmit(rest)
		return out, true, err
	case args[2] == "srun" && !wantsHelp:
		if os.Getenv("SHOAL_STEP_SOCK") != "" {
			return slices.Concat([]string{args[0], "step", "--", "srun"}, rest), true, nil
		}
		out, err := srunRun(rest)
		return out, false, err
	}
	return args, false, nil
}

// sbatchSubmit is `shoal submit` for `sbatch ARGS`.
func sbatchSubmit(args []string) ([]string, error) {
	opts, operands, wrap, err := splitSlurmOptions("sbatch", args, true)
	if err != nil {
		return nil, err
	}
	var cmd []string
	var words []string
	switch {
	case wrap != "" && len(operands) > 0:
		return nil, fmt.Errorf("sbatch: --wrap and a script %q: give one of them", operands[0])
	case wrap != "":
		if words, err = parseDirectivesWith("sbatch", strings.NewReader(""), opts); err != nil {
			return nil, err
		}
		cmd = []string{"/bin/sh", "-c", wrap}
	case len(operands) == 0:
		return nil, fmt.Errorf("sbatch: give a batch script (sbatch job.slurm), or --wrap=COMMAND; reading the script from standard input is not supported")
	default:
		f, err := os.Open(operands[0])
		if err != nil {
			return nil, fmt.Errorf("sbatch: unable to open file %s: %w", operands[0], err)
		}
		defer f.Close()
		if words, err = parseDirectivesWith(operands[0], f, opts); err != nil {
			return nil, err
		}
		cmd = operands
	}
	return slices.Concat([]string{"shoal", "submit", "--sbatch"}, words, []string{"--batch", "--"}, cmd), nil
}

// srunRun is `shoal run` for `srun ARGS` outside a batch job.
func srunRun(args []string) ([]string, error) {
	opts, operands, _, err := splitSlurmOptions("srun", args, false)
	if err != nil {
		return nil, err
	}
	if len(operands) == 0 {
		return nil, fmt.Errorf("srun: give the program to run (srun -n 4 ./hello)")
	}
	var size sbatchSize
	words, err := translateSbatch(opts, 0, &size)
	if err != nil {
		return nil, fmt.Errorf("srun: %w", err)
	}
	sized, err := size.words()
	if err != nil {
		return nil, fmt.Errorf("srun: %w", err)
	}
	if sized == nil {
		sized = []string{"--np", "1"} // srun runs one task unless told more
	}
	return slices.Concat([]string{"shoal", "run"}, sized, words, []string{"--"}, operands), nil
}

// splitSlurmOptions reads the options before the first operand (the
// script or program; everything after it is its own), as sbatch and srun
// do. --wrap is sbatch's and is returned apart; --mpi and the options
// shoal sets by itself are srun's.
func splitSlurmOptions(cmd string, args []string, sbatch bool) (opts, operands []string, wrap string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return opts, args[i+1:], wrap, nil
		}
		if len(a) < 2 || a[0] != '-' {
			return opts, args[i:], wrap, nil
		}
		if sbatch && (a == "--wrap" || strings.HasPrefix(a, "--wrap=")) {
			if v, ok := strings.CutPrefix(a, "--wrap="); ok {
				wrap = v
			} else if i+1 < len(args) {
				i++
				wrap = args[i]
			} else {
				return nil, nil, "", fmt.Errorf("%s: --wrap needs a command", cmd)
			}
			continue
		}
		opt, _, hasVal, lerr := lookupSbatch(a)
		if lerr != nil {
			return nil, nil, "", fmt.Errorf("%s: %s", cmd, strings.Replace(lerr.Error(), "#SBATCH option", cmd+" option", 1))
		}
		opts = append(opts, a)
		if opt.value && !hasVal {
			if i+1 >= len(args) {
				return nil, nil, "", fmt.Errorf("%s: %s needs a value", cmd, a)
			}
			i++
			opts = append(opts, args[i])
		}
	}
	return opts, nil, wrap, nil
}

// writeHelp prints a Slurm command's help, which holds % formats.
func writeHelp(c *cli.Context, help string) {
	_, _ = io.WriteString(c.App.Writer, help+"\n")
}
