package cmdline

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/exitcode"
)

// HandleUsageErrors makes every usage error of app's commands and
// subcommands exit 2 on stderr, naming the help to read (cli's default
// prints the help on stdout and exits 1), and gives a command with
// subcommands and no action of its own unknownSubcommand.
func HandleUsageErrors(app *cli.App) {
	app.OnUsageError = onUsageError
	for _, cmd := range app.Commands {
		cmd.OnUsageError = onUsageError
		for _, sub := range cmd.Subcommands {
			sub.OnUsageError = onUsageError
		}
		if len(cmd.Subcommands) > 0 && cmd.Action == nil {
			cmd.Action = unknownSubcommand
		}
	}
}

// unknownSubcommand is the action of a command with subcommands (hooks,
// pool) when none of them was named: help, or a usage error for a name
// that is none of them.
func unknownSubcommand(c *cli.Context) error {
	if !c.Args().Present() {
		return cli.ShowSubcommandHelp(c)
	}
	var names []string
	for _, sub := range c.Command.Subcommands {
		if sub.Name != "help" {
			names = append(names, sub.Name)
		}
	}
	return UsageError(c, "unknown subcommand %q: use one of %s", c.Args().First(), strings.Join(names, ", "))
}

// onUsageError reports bad flags on stderr with exit code 2.
func onUsageError(c *cli.Context, err error, _ bool) error {
	return UsageError(c, "%v", err)
}

// UsageError is a usage error that names the help to read: that of the
// command, or subcommand, being run.
func UsageError(c *cli.Context, format string, args ...any) error {
	var path []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != c.App.Name {
			path = append([]string{ctx.Command.Name}, path...)
		}
	}
	help := strings.Join(append(append([]string{"git apex"}, path...), "-h"), " ")
	return exitcode.New(exitcode.Usage, format+"; see `%s`", append(args, help)...)
}

// Positional returns the command's arguments when there are between min
// and max of them. Flags written after arguments were moved before them
// (FlagsFirst), so what is left are arguments, and a "--" among
// them (one that followed an argument) is dropped.
func Positional(c *cli.Context, min, max int, names string) ([]string, error) {
	args := c.Args().Slice()
	if i := slices.Index(args, "--"); i >= 0 {
		args = append(args[:i:i], args[i+1:]...)
	}
	if len(args) < min || len(args) > max {
		return nil, UsageError(c, "expected %s", names)
	}
	return args, nil
}
