package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/hooks"
	"github.com/git-apex/git-apex/sweep"
)

func hooksCommand() *cli.Command {
	action := func(do func(dir string) ([]hooks.Status, error)) cli.ActionFunc {
		return func(c *cli.Context) error {
			if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			dir, err := hooks.DirOf(c.Context, ".")
			if err != nil {
				return err
			}
			list, err := do(dir)
			if err == nil && c.Bool("json") {
				return printJSON(c, list)
			}
			for _, st := range list {
				note(c, "%s", st.Describe())
			}
			return err
		}
	}
	return &cli.Command{
		Name:      "hooks",
		Usage:     "manage the git hooks that remove merged environments",
		UsageText: "git apex hooks install|uninstall|status [--json]",
		Description: "post-merge and post-rewrite hooks, in the directory git runs hooks from (core.hooksPath included). " +
			"A hook already there keeps working: it is kept beside git-apex's and run first, and put back by uninstall.",
		Subcommands: []*cli.Command{
			{Name: "install", Usage: "install the hooks (again: rewrites them)", Flags: []cli.Flag{jsonFlag}, Action: action(hooks.Install)},
			{Name: "uninstall", Usage: "remove git-apex's hooks and restore the ones they chained", Flags: []cli.Flag{jsonFlag}, Action: action(hooks.Uninstall)},
			{Name: "status", Usage: "say which hooks are installed where", Flags: []cli.Flag{jsonFlag}, Action: action(func(dir string) ([]hooks.Status, error) {
				return hooks.Inspect(dir), nil
			})},
		},
	}
}

// hookCommand is the entry point the installed hooks call. Its arguments
// come from git, untouched; it always exits 0.
func hookCommand() *cli.Command {
	return &cli.Command{
		Name:            "hook",
		Usage:           "run a git hook's handler (called by the installed hooks)",
		UsageText:       "git apex hook <git-hook-name> [args...]",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cmdline.UsageError(c, "expected a hook name")
			}
			sweep.Hook(c.Context, c.Args().First(), c.Args().Tail(), repoOptions(c))
			return nil
		},
	}
}
