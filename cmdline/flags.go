// Package cmdline holds what the command line needs beyond urfave/cli:
// flags in any position, as git takes them, and colour.
package cmdline

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// KillFlag is the --kill of remove, close, finish, gc and pool drain.
var KillFlag = &cli.BoolFlag{Name: "kill", Usage: "end the processes still working there (SIGTERM, then SIGKILL after [remove].kill_grace) rather than keep it"}

// FlagsFirst returns args (args[0] being the program) with each
// command's flags moved in front of its arguments, keeping their order,
// so that cli, which stops at the first argument, parses
// `git apex rm feature-x --force` as `git apex rm --force feature-x`.
//
// The flags before the command name stay where they are, and a global
// flag written after it (`list --color=always`) joins them, unless the
// command has a flag of that name. A "--" ends the
// flags: it and everything after it are kept as they are, after the
// moved flags. A command named in commandArgs takes flags only before
// that many arguments: the rest is a command line of its own (`exec ID
// ls -la`). An unknown flag is moved like any other, so cli still
// refuses it; so is a last flag that lacks its value; -h or --help shows
// the command's help, whatever else.
func FlagsFirst(app *cli.App, args []string, commandArgs map[string]int) []string {
	if len(args) == 0 {
		return args
	}
	out, rest := []string{args[0]}, args[1:]
	flags, commands := app.Flags, app.Commands
	var cmd *cli.Command
	var global []string // global flags written after the command
	named := 0          // where the command's name is in out
	// moveFlag moves the flag rest[0], with its value, to out (or to
	// global, for a global flag after the command).
	moveFlag := func() {
		to, own := &out, flags
		if cmd != nil && !isOneOf(rest[0], flags) && !isOneOf(rest[0], []cli.Flag{cli.HelpFlag}) && isOneOf(rest[0], app.Flags) {
			to, own = &global, app.Flags
		}
		n := flagLen(rest[0], rest, own)
		*to, rest = append(*to, rest[:n]...), rest[n:]
	}
	// The global flags, then the command and subcommand names.
	for len(rest) > 0 && (isFlag(rest[0]) || Find(commands, rest[0]) != nil) {
		if isFlag(rest[0]) {
			moveFlag()
			continue
		}
		if cmd == nil {
			named = len(out)
		}
		cmd = Find(commands, rest[0])
		commands, flags = cmd.Subcommands, cmd.Flags
		out, rest = append(out, rest[0]), rest[1:]
	}
	if cmd == nil {
		return append(out, rest...)
	}
	limit := -1
	if n, ok := commandArgs[cmd.Name]; ok {
		limit = n
	}
	var positional []string
loop:
	for len(rest) > 0 && rest[0] != "--" && len(positional) != limit {
		switch arg := rest[0]; {
		case !isFlag(arg):
			positional, rest = append(positional, arg), rest[1:]
		case arg == "-h" || arg == "--help" || len(rest) == 1 && TakesValue(flags, arg) && !strings.Contains(arg, "="):
			// Help for the command, whatever the arguments (cli would
			// take the first one for a help topic); or a flag that
			// lacks its value, which cli then names.
			positional, rest = nil, []string{arg}
			break loop
		default:
			moveFlag()
		}
	}
	out = append(out[:named:named], append(global, out[named:]...)...)
	return append(append(out, positional...), rest...)
}

// isOneOf reports whether the flag word (-x, --name or --name=value) names
// one of flags.
func isOneOf(word string, flags []cli.Flag) bool { return flagNamed(word, flags) != nil }

// isFlag reports whether arg is a flag: "-x", "--xyz", not "-" alone
// (standard input) and not "--".
func isFlag(arg string) bool { return len(arg) > 1 && arg[0] == '-' && arg != "--" }

// flagLen is how many of rest the flag rest[0] takes: 2 when it takes a
// value that is the next argument, else 1.
func flagLen(arg string, rest []string, flags []cli.Flag) int {
	if strings.Contains(arg, "=") || !TakesValue(flags, arg) || len(rest) < 2 {
		return 1
	}
	return 2
}

// TakesValue reports whether the flag word (-x, --name or --name=value)
// is one of flags that takes a value: any but a boolean one.
func TakesValue(flags []cli.Flag, word string) bool {
	_, isBool := flagNamed(word, flags).(*cli.BoolFlag)
	return flagNamed(word, flags) != nil && !isBool
}

// flagNamed is the flag of flags the flag word names, or nil.
func flagNamed(word string, flags []cli.Flag) cli.Flag {
	name, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// Find is the command named name (or one of its aliases), or nil.
func Find(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
