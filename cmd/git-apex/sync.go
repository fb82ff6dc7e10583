package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
)

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "bring back what a full environment's container made, now",
		UsageText: "git apex sync <identity>",
		Description: "Commits on the environment's branch come back by fast-forward, as after every exec; " +
			"in copy mode ([container].transfer) the files the container changed come back too. " +
			"It is the retry when such an exchange failed: the container is kept until it succeeds.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			return withRepo(c, func(r *repo.Repo) error {
				b, err := sandbox.Sync(c.Context, r, args[0])
				if err != nil {
					return err
				}
				switch {
				case b.To != "":
					note(c, "%s: %s..%s from the container", args[0], repo.Short(b.From), repo.Short(b.To))
				case b.Files == 0 && b.Kept == "" && len(b.Conflicts) == 0:
					note(c, "%s: nothing new in the container", args[0])
				}
				if b.Files > 0 {
					note(c, "%s: %d files from the container", args[0], b.Files)
				}
				return nil
			})
		},
	}
}
