package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// commandLineCommands take a program and its arguments as their positional
// arguments: everything from the first positional on belongs to the program,
// so its flags are never read as shoal's (shoal run -n 4 ./prog --flag).
// rsh parses its own arguments (SkipFlagParsing) and is left alone too.
var commandLineCommands = []string{"run", "submit"}

// reorderArgs moves a command's flags ahead of its positional arguments, so
// that `shoal job 5 --json` and `shoal logs 5 -f` parse as Slurm, git and
// kubectl users expect: urfave/cli v2, like Go's flag package, stops reading
// flags at the first positional argument. A flag that takes a value keeps
// the argument after it (unless written --flag=value); `--` and everything
// after it stay positional; commands that take a command line and commands
// that parse their own arguments are not touched.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 3 || strings.HasPrefix(args[1], "-") {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	// A command group (shoal tls cert create ...): reorder within the
	// subcommand named, never across the names that lead to it.
	head := 2
	for len(cmd.Subcommands) > 0 && head < len(args) {
		sub := subcommand(cmd, args[head])
		if sub == nil {
			return args
		}
		cmd, head = sub, head+1
	}
	if len(cmd.Subcommands) > 0 || cmd.SkipFlagParsing {
		return args
	}
	commandLine := slices.Contains(commandLineCommands, cmd.Name)
	rest := args[head:]
	flags := make([]string, 0, len(rest))
	var pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue(cmd, name) && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
			continue
		}
		if commandLine {
			pos = append(pos, rest[i:]...)
			break
		}
		pos = append(pos, a)
	}
	out := append(slices.Clone(args[:head]), flags...)
	return append(out, pos...)
}

func subcommand(cmd *cli.Command, name string) *cli.Command {
	for _, sub := range cmd.Subcommands {
		if sub.HasName(name) {
			return sub
		}
	}
	return nil
}

// takesValue reports whether the command's flag of that name (or alias)
// reads the next argument as its value; unknown flags read none (urfave
// refuses them with a usage error anyway).
func takesValue(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		if v, ok := f.(cli.DocGenerationFlag); ok {
			return v.TakesValue()
		}
		return false
	}
	return false
}

// splitGlued writes a short flag glued to its value, -n8 or -Jrelax, as
// two arguments for run and submit, as Slurm's commands take it (Go's flag
// package reads -n8 as a flag named n8). A word that is itself a flag's
// name (-np) and everything from the program on are left alone.
func splitGlued(app *cli.App, args []string) []string {
	if len(args) < 3 || !slices.Contains(commandLineCommands, args[1]) {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	out := slices.Clone(args[:2])
	for i := 2; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return append(out, args[i:]...)
		}
		name := strings.TrimLeft(a, "-")
		switch {
		case strings.HasPrefix(a, "--") || strings.Contains(name, "=") || len(name) < 2 || hasFlag(cmd, name):
			out = append(out, a)
			if !strings.Contains(name, "=") && takesValue(cmd, name) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case takesValue(cmd, name[:1]):
			out = append(out, a[:2], a[2:])
		default:
			out = append(out, a)
		}
	}
	return out
}

// hasFlag reports whether the command has a flag of that name or alias.
func hasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}
