// Package cmdline holds what the command line needs beyond urfave/cli:
// flags in any position, as git takes them, and colour.
package cmdline

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

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
	out := []string{args[0]}
	rest := args[1:]
	// The global flags, then the command and subcommand names.
	flags := app.Flags
	commands := app.Commands
	var cmd *cli.Command
	var global []string // global flags written after the command
	named := 0          // where the command's name is in out
	for len(rest) > 0 {
		arg := rest[0]
		if arg == "--" || !isFlag(arg) {
			next := Find(commands, arg)
			if next == nil {
				break
			}
			if cmd == nil {
				named = len(out)
			}
			cmd, commands = next, next.Subcommands
			flags = next.Flags
			out, rest = append(out, arg), rest[1:]
			continue
		}
		if cmd != nil && isGlobal(arg, app, flags) {
			n := flagLen(arg, rest, app.Flags)
			global, rest = append(global, rest[:n]...), rest[n:]
			continue
		}
		n := flagLen(arg, rest, flags)
		out, rest = append(out, rest[:n]...), rest[n:]
	}
	if cmd == nil {
		return append(out, rest...)
	}
	limit := -1
	if n, ok := commandArgs[cmd.Name]; ok {
		limit = n
	}
	var positional []string
	for len(rest) > 0 {
		arg := rest[0]
		if arg == "--" || len(positional) == limit {
			break
		}
		if !isFlag(arg) {
			positional, rest = append(positional, arg), rest[1:]
			continue
		}
		if arg == "-h" || arg == "--help" || len(rest) == 1 && flagLen(arg, []string{arg, ""}, flags) == 2 {
			// Help for the command, whatever the arguments (cli would
			// take the first one for a help topic); or a flag that
			// lacks its value, which cli then names.
			return append(out, arg)
		}
		if isGlobal(arg, app, flags) {
			n := flagLen(arg, rest, app.Flags)
			global, rest = append(global, rest[:n]...), rest[n:]
			continue
		}
		n := flagLen(arg, rest, flags)
		out, rest = append(out, rest[:n]...), rest[n:]
	}
	out = append(out[:named:named], append(global, out[named:]...)...)
	return append(append(out, positional...), rest...)
}

// isGlobal reports whether the flag word is a global flag (--color) that
// the command, whose flags are own, does not take itself.
func isGlobal(word string, app *cli.App, own []cli.Flag) bool {
	return !isOneOf(word, append(own, cli.HelpFlag)) && isOneOf(word, app.Flags)
}

// isOneOf reports whether the flag word names one of flags.
func isOneOf(word string, flags []cli.Flag) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

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
	name, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	for _, f := range flags {
		if _, isBool := f.(*cli.BoolFlag); !isBool && slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
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
