package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/service"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Aliases:   []string{"rm"},
		Usage:     "remove an environment's worktree and mark it destroyed",
		UsageText: "git apex remove [--force] [--delete-branch] <identity>",
		Description: "Refuses (exit 3, changing nothing) when the worktree has modified, staged or untracked files, " +
			"a detached HEAD with commits no branch or remote holds, or holds your current directory; --force removes anyway. " +
			"The branch is kept unless --delete-branch, which refuses when the branch has commits found in no other branch " +
			"or remote, unless --force. A shared environment is only marked destroyed.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "discard uncommitted work and commits held nowhere else"},
			&cli.BoolFlag{Name: "delete-branch", Usage: "delete the environment's branch too"},
		},
		Action: func(c *cli.Context) error {
			args, err := positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			cwd, _ := os.Getwd()
			req := service.RemoveRequest{Identity: args[0], Force: c.Bool("force"), DeleteBranch: c.Bool("delete-branch"), Cwd: cwd}
			return withService(c, func(s *service.Service) error {
				res, err := s.Remove(c.Context, req)
				if err != nil {
					return err
				}
				reportRemoval(c, res)
				return nil
			})
		},
	}
}

// reportRemoval says on stderr what a removal did.
func reportRemoval(c *cli.Context, res *service.Removal) {
	e := res.Env
	switch {
	case res.AlreadyGone:
		note(c, "%s was already gone", e.Identity)
	case e.Mode == "shared":
		note(c, "removed %s (shared: the main checkout was left as it is)", e.Identity)
	default:
		note(c, "removed %s: %s", e.Identity, e.Path)
	}
	switch {
	case res.BranchDeleted:
		note(c, "deleted branch %s", e.Branch)
	case e.Branch != "":
		note(c, "kept branch %s (`git apex remove --delete-branch` deletes it too)", e.Branch)
	}
}
