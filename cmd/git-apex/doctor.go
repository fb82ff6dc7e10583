package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/doctor"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "report where the state, git and the file system disagree; --fix repairs what is safe",
		UsageText: "git apex doctor [--fix] [--json]",
		Description: "Checks the state database, the policy, every environment against git (deleted, moved, or switched " +
			"by hand), unknown worktrees under the environment root, git's registrations of deleted worktrees, stale git " +
			"lock files, and the hooks. Exits 3 when problems remain; suggestions (such as hooks not installed yet) " +
			"leave the exit code 0.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "fix", Usage: "repair what is safe to repair"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array"},
		},
		Action: func(c *cli.Context) error {
			if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			var rebuilt []doctor.Finding
			run := func(r *repo.Repo) error {
				findings, err := doctor.New(r).Run(c.Context, c.Bool("fix"))
				if err != nil {
					return err
				}
				return printFindings(c, append(rebuilt, findings...))
			}
			err := withRepo(c, run)
			var damaged *state.DamagedError
			if !errors.As(err, &damaged) {
				return err
			}
			if !c.Bool("fix") {
				return printFindings(c, []doctor.Finding{{Check: "state", Status: "problem", Detail: damaged.Error()}})
			}
			if rebuilt, err = doctor.RebuildState(c.Context, ".", repoOptions(c)); err != nil {
				return err
			}
			return withRepo(c, run)
		},
	}
}

// printFindings prints doctor's report and fails (exit 3) while problems
// remain.
func printFindings(c *cli.Context, findings []doctor.Finding) error {
	var err error
	if c.Bool("json") {
		err = printJSON(c, findings)
	} else {
		err = printTable(c, "", []string{"STATUS", "CHECK", "DETAIL"}, cmdline.FindingRows(findings))
	}
	if err != nil {
		return err
	}
	msg, err := cmdline.Verdict(findings)
	if msg != "" {
		note(c, "%s", msg)
	}
	return err
}
