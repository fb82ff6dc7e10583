package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/shell"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the completion script for bash, zsh or fish",
		UsageText: "git apex completion bash|zsh|fish",
		Description: "install.sh installs the scripts where each shell looks; to load one by hand:\n" +
			"   source <(git apex completion bash)     # in ~/.bashrc, after git's own completion\n" +
			"   source <(git apex completion zsh)      # in ~/.zshrc, after compinit\n" +
			"   git apex completion fish | source      # in ~/.config/fish/config.fish\n" +
			"They complete commands, flags, identities of live environments and workflows, in `git apex` and `git-apex`.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "bash, zsh or fish")
			if err != nil {
				return err
			}
			script, err := shell.Completion(args[0])
			if err != nil {
				return cmdline.UsageError(c, "%v", err)
			}
			_, err = fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

// completeCommand is what the completion scripts run: `git-apex
// __complete -- <words after git-apex> <word being typed>`.
func completeCommand() *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			words := c.Args().Slice()
			if len(words) > 0 && words[0] == "--" {
				words = words[1:]
			}
			src := shell.RepoSource(".", repoOptions(c))
			return shell.Print(c.App.Writer, shell.Candidates(c.Context, c.App, words, src))
		},
	}
}
