package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/envexec"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
)

func openCommand() *cli.Command {
	return &cli.Command{
		Name:      "open",
		Usage:     "open an environment in your editor",
		UsageText: "git apex open <identity>",
		Description: "Runs git config apex.editor, else $VISUAL, else $EDITOR, with the environment's path as its last " +
			"argument, in its directory, with its APEX_* variables, and exits with the editor's code. It runs on the " +
			"host in every mode, a full environment's included: its worktree is on the host.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			return withRepo(c, func(r *repo.Repo) error {
				editor, err := envexec.Editor(r.Personal(c.Context))
				if err != nil {
					return err
				}
				s := service.New(r)
				path, err := s.Path(c.Context, args[0])
				if err != nil {
					return err
				}
				return runWith(c, s, service.ExecRequest{Identity: args[0], Cmd: envexec.EditorCommand(editor, path), Host: true})
			})
		},
	}
}
