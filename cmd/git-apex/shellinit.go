package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/shell"
)

func shellInitCommand() *cli.Command {
	return &cli.Command{
		Name:      "shell-init",
		Usage:     "print a shell function that lets `git apex cd` change directory",
		UsageText: "git apex shell-init bash|zsh|fish",
		Description: "The function wraps git: `git apex cd <identity>` and `git apex start --cd ...` change the " +
			"shell's directory, everything else goes to git unchanged. `git apex path` stays the scripting interface.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "bash, zsh or fish")
			if err != nil {
				return err
			}
			script, err := shell.Init(args[0])
			if err != nil {
				return cmdline.UsageError(c, "%v", err)
			}
			_, err = fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

// cdCommand is what runs when the shell function is not installed: a
// program cannot change its shell's directory, so it says how.
func cdCommand() *cli.Command {
	return &cli.Command{
		Name:      "cd",
		Usage:     "change the shell's directory to an environment (needs `git apex shell-init`)",
		UsageText: "git apex cd <identity>",
		Action: func(c *cli.Context) error {
			if _, err := cmdline.Positional(c, 1, 1, "<identity>"); err != nil {
				return err
			}
			return exitcode.New(exitcode.Usage, "git apex cd needs the shell function: add `eval \"$(git apex shell-init bash)\"` (or zsh, or `git apex shell-init fish | source`) to your shell's startup file; meanwhile, cd \"$(git apex path %s)\"", c.Args().First())
		},
	}
}
