package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/repo"
)

func trustCommand() *cli.Command {
	return &cli.Command{
		Name:      "trust",
		Usage:     "approve what the policy runs on or exposes from the host",
		UsageText: "git apex trust [--revoke] [--json]",
		Description: "Setup commands, lifecycle hooks, container volumes and copy globs that leave the checkout are " +
			"not used until this command approves them. Running it is the approval: it asks nothing. The approval " +
			"covers exactly the current settings, for this repository where it is; any change needs it again.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "revoke", Usage: "withdraw the approval"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			return withRepo(c, func(r *repo.Repo) error {
				host, had, err := r.Trust(c.Bool("revoke"))
				if err == nil && c.Bool("json") {
					return printJSON(c, repo.TrustReport{Repository: r.Git.MainRoot(), Approved: !c.Bool("revoke"),
						Revoked: c.Bool("revoke") && had, Settings: append([]string{}, host.Lines()...)})
				}
				switch {
				case err != nil:
					return err
				case c.Bool("revoke") && had:
					note(c, "withdrew the approval of this repository's policy")
				case c.Bool("revoke"):
					note(c, "this repository's policy had no approval")
				case !host.ForFull():
					note(c, "the policy runs nothing on the host and exposes nothing from it: nothing to approve")
				default:
					note(c, "approved for this repository:\n  %s", strings.Join(host.Lines(), "\n  "))
				}
				return nil
			})
		},
	}
}
