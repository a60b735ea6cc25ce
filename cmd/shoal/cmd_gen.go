package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agentconfig"
)

// genCommand writes what the Debian package installs beside the binary,
// from the CLI's own definitions so they never drift from it: the man
// pages shoal(1) and shoal.hcl(5), and the bash and zsh completions, which
// ask the binary itself (urfave/cli's --generate-bash-completion).
func genCommand() *cli.Command {
	return &cli.Command{
		Name:   "gen",
		Usage:  "write the man pages and shell completions (for packaging)",
		Hidden: true,
		Subcommands: []*cli.Command{
			{
				Name:      "man",
				Usage:     "write shoal.1 and shoal.hcl.5 into DIR",
				ArgsUsage: "DIR",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef(c, "gen man takes the directory to write into")
					}
					return genMan(c, c.Args().First())
				},
			},
			{
				Name:      "completion",
				Usage:     "print the completion script of SHELL (bash or zsh)",
				ArgsUsage: "bash|zsh",
				Action: func(c *cli.Context) error {
					script, ok := map[string]string{"bash": bashCompletion, "zsh": zshCompletion}[c.Args().First()]
					if c.NArg() != 1 || !ok {
						return usagef(c, "gen completion takes bash or zsh")
					}
					_, err := fmt.Fprint(c.App.Writer, script)
					return err
				},
			},
		},
	}
}

func genMan(c *cli.Context, dir string) error {
	page, err := c.App.ToManWithSection(1)
	if err != nil {
		return cli.Exit(fmt.Sprintf("render shoal(1): %v", err), exitFailure)
	}
	page += "\n.SH SEE ALSO\n.BR shoal.hcl (5)\n"
	for name, body := range map[string]string{"shoal.1": page, "shoal.hcl.5": configManPage(c.App.Version)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return cli.Exit(fmt.Sprintf("write man page: %v", err), exitFailure)
		}
	}
	return nil
}

// configManPage is shoal.hcl(5): every key of the agent's config file with
// its type, meaning and default, from the agent command's flags.
func configManPage(version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH SHOAL.HCL 5 \"\" \"shoal %s\" \"File Formats\"\n", roff(version))
	b.WriteString(`.SH NAME
shoal.hcl \- configuration file of the shoal agent
.SH SYNOPSIS
.B /etc/shoal/shoal.hcl
.br
.B shoal agent \-\-config /etc/shoal/shoal.hcl [\-\-validate]
.SH DESCRIPTION
The file is HCL, as Nomad's and Consul's are (JSON when its name ends in .json).
Every flag of
.B shoal agent
is a key, spelt with underscores:
.B \-\-data\-dir
is
.BR data_dir .
A flag given on the command line, or its SHOAL_* environment variable, overrides the file.
.PP
An unknown key, a value of the wrong type and a value out of bounds are refused with
.IR FILE : LINE : " KEY" ": what is wrong"
and the agent exits with status 2;
.B \-\-validate
checks a file (and the flags) and exits 0 when it is valid.
.SH EXAMPLE
.nf
data_dir   = "/var/lib/shoal"
token_file = "/etc/shoal/token"
join       = ["node1", "node2", "node3"]
probe_budget = "2GiB"
job_rlimit = ["nofile=4096", "memlock=unlimited"]
.fi
.SH KEYS
`)
	for _, f := range agentCommand().Flags {
		name := f.Names()[0]
		k, ok := agentconfig.Lookup(name)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fR = %s\n", roff(k.Name()), roff(k.Kind.String()))
		usage, def := "", ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			usage, def = d.GetUsage(), d.GetDefaultText()
			if def == "" {
				def = d.GetValue()
			}
		}
		usage = strings.ReplaceAll(usage, "`", "")
		b.WriteString(roff(usage))
		if def != "" && def != "false" && def != "[]" {
			fmt.Fprintf(&b, "; default: %s", roff(def))
		}
		if reloadable(k.Name()) {
			b.WriteString("; SIGHUP reloads it")
		}
		b.WriteString("\n")
	}
	b.WriteString(`.SH RELOADING
.B systemctl reload shoal
(SIGHUP) re-reads the file and applies at once the keys marked "SIGHUP reloads it" above:
`)
	var keys []string
	for _, k := range agentconfig.Keys() {
		if reloadable(k.Name()) {
			keys = append(keys, roff(k.Name()))
		}
	}
	b.WriteString(strings.Join(keys, ", "))
	b.WriteString(`.
Every other key needs
.BR "systemctl restart shoal" ;
the agent logs what it changed and which keys need a restart.
A bad file changes nothing.
.SH FILES
.TP
.I /etc/shoal/shoal.hcl
the configuration of shoal.service
.TP
.I /etc/shoal/token
the cluster token ('shoal keygen'); the service does not start without it
.TP
.I /var/lib/shoal
the data directory (raft's log and snapshots)
.SH SEE ALSO
.BR shoal (1)
`)
	return b.String()
}

// reloadable reports whether a SIGHUP applies config key k (cmd_agent.go's
// reload).
func reloadable(k string) bool { return k == "log_level" || slices.Contains(agent.ReloadableKeys, k) }

// roff escapes text for a man page line.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	s = strings.ReplaceAll(s, `"`, `\(dq`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// The completion scripts ask shoal for the candidates: urfave/cli answers
// the words so far followed by --generate-bash-completion with the
// commands or flags that may come next.
const bashCompletion = `# bash completion for shoal
_shoal() {
	local cur words
	cur="${COMP_WORDS[COMP_CWORD]}"
	words=("${COMP_WORDS[@]:0:COMP_CWORD}")
	if [[ "$cur" == -* ]]; then
		words+=("$cur")
	fi
	COMPREPLY=($(compgen -W "$("${words[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
	return 0
}
complete -o bashdefault -o default -F _shoal shoal
`

const zshCompletion = `#compdef shoal
# zsh completion for shoal
_shoal() {
	local -a opts
	local cur=${words[CURRENT]}
	local -a prev=(${words[1,CURRENT-1]})
	if [[ "$cur" == -* ]]; then
		prev+=("$cur")
	fi
	opts=("${(@f)$(${prev[@]} --generate-bash-completion 2>/dev/null)}")
	if [[ -n "${opts[1]}" ]]; then
		_describe 'shoal' opts
	else
		_files
	fi
}
if [[ "$funcstack[1]" == "_shoal" ]]; then
	_shoal "$@"
else
	compdef _shoal shoal
fi
`
