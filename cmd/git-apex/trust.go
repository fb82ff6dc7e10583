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
		UsageText: "git apex trust [--host] [--revoke] [--json]",
		Description: "Setup commands, lifecycle hooks, container volumes and copy globs that leave the checkout are " +
			"not used until this command approves them. Running it is the approval: it asks nothing. The approval " +
			"covers exactly the current settings, for this repository where it is; any change needs it again. " +
			"Commands that the policy runs only in full environments' containers are approved there only: --host " +
			"lets them run on the host too, in an environment that fell back to worktree or was asked for in a weaker mode.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "host", Usage: "let the policy's commands run on the host too, where the policy runs them only in containers"},
			&cli.BoolFlag{Name: "revoke", Usage: "withdraw the approval"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			if c.Bool("host") && c.Bool("revoke") {
				return cmdline.UsageError(c, "--host approves, --revoke withdraws: give one of them")
			}
			return withRepo(c, func(r *repo.Repo) error {
				host, had, err := r.Trust(c.Bool("revoke"), c.Bool("host"))
				onHost := false
				if err == nil && !c.Bool("revoke") {
					onHost, err = trustedOnHost(r)
				}
				if err == nil && c.Bool("json") {
					return printJSON(c, repo.TrustReport{Repository: r.Git.MainRoot(), Approved: !c.Bool("revoke"),
						Revoked: c.Bool("revoke") && had, Settings: append([]string{}, host.Lines()...), OnHost: onHost})
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
					if len(host.Commands) > 0 && !onHost {
						note(c, "the commands are approved in full environments' containers only: an environment that falls back to worktree, or is asked for in worktree or shared, is made without them (with a warning); `git apex trust --host` lets them run on the host too")
					} else if len(host.Commands) > 0 && c.Bool("host") {
						note(c, "the commands may run on the host too (--host)")
					}
				}
				return nil
			})
		},
	}
}

// trustedOnHost reports whether the approved policy's commands may run on
// the host (repo.Repo.TrustedOnHost).
func trustedOnHost(r *repo.Repo) (bool, error) {
	pol, err := r.Policy()
	if err != nil {
		return false, err
	}
	onHost, _, err := r.TrustedOnHost(pol)
	return onHost, err
}
