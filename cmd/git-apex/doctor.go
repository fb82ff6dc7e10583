package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/doctor"
	"github.com/git-apex/git-apex/service"
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
			findings, err := service.Doctor(c.Context, ".", repoOptions(c), c.Bool("fix"))
			if err != nil {
				return err
			}
			return printFindings(c, findings)
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
