package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Aliases:   []string{"rm"},
		Usage:     "remove an environment's worktree and mark it destroyed",
		UsageText: "git apex remove [--force [--force]] [--delete-branch] [--kill] [--json] <identity>",
		Description: "Refuses (exit 3, changing nothing) when the worktree has modified, staged or untracked files, " +
			"a detached HEAD with commits no branch or remote holds, or holds your current directory; --force removes anyway, keeping that work in the trash. " +
			"Submodule commits that neither the main repository's copy of the submodule nor its remote holds are refused; --force keeps them " +
			"in that copy, under refs/apex/kept/. What the trash cannot keep (a nested repository, changes inside a submodule, commits of a submodule " +
			"the main repository has no copy of) is refused even then: --force --force deletes it too. " +
			"The branch is kept unless --delete-branch, which refuses when the branch has commits found in no other branch " +
			"or remote, unless --force. A shared environment is only marked destroyed.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"},
				Usage: "discard uncommitted work and commits held nowhere else, keeping them in the trash; twice, delete what the trash cannot keep too (nested repositories, submodules' changes and commits)"},
			&cli.BoolFlag{Name: "delete-branch", Usage: "delete the environment's branch too"},
			cmdline.KillFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			cwd, _ := os.Getwd()
			req := service.RemoveRequest{Identity: args[0], Force: c.Bool("force"), DeleteBranch: c.Bool("delete-branch"), Cwd: cwd, Kill: c.Bool("kill"), DeleteUnkept: c.Count("force") > 1}
			return withService(c, func(s *service.Service) error {
				res, err := s.Remove(c.Context, req)
				if err != nil {
					return err
				}
				for _, line := range cmdline.RemovalNotes(res) {
					note(c, "%s", line)
				}
				return printIfJSON(c, res)
			})
		},
	}
}
