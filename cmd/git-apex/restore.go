package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
)

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "make a removed environment again with the uncommitted work a forced removal discarded",
		UsageText: "git apex restore [--json] <identity> | restore --list [--json]",
		Description: "Before a command discards uncommitted work (remove --force), it keeps it in the trash: staged changes, " +
			"changes to tracked files and untracked files that are not ignored, as git objects under refs/apex/trash/, " +
			"kept for [trash].keep (default 14d; `git apex gc` drops older ones). restore makes the identity's environment " +
			"again (same mode, branch and base; a deleted branch is made again at its tip) and puts every file back as it " +
			"was, staged state included; then the entry is dropped. It refuses (exit 3) while the identity names a live " +
			"environment, and exits 7 when the trash holds nothing of it. --list shows what the trash holds, newest first.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "list", Usage: "show what the trash holds: identity, when, how many files, branch, path"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.Bool("list") {
				if _, err := cmdline.Positional(c, 0, 0, "no arguments with --list"); err != nil {
					return err
				}
				return withService(c, func(s *service.Service) error {
					entries, err := s.Trash(c.Context)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c, entries)
					}
					var rows [][]string
					for _, e := range entries {
						rows = append(rows, cmdline.TrashRow(e))
					}
					return printTable(c, "the trash is empty", []string{"IDENTITY", "DISCARDED", "FILES", "BRANCH", "PATH"}, rows)
				})
			}
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			return withService(c, func(s *service.Service) error {
				res, err := s.Restore(c.Context, args[0])
				if err != nil {
					return err
				}
				note(c, "restored %s: %s", res.Env.Identity, cmdline.Describe(res.Env))
				if res.BranchRecreated {
					note(c, "made branch %s again at %s", res.Env.Branch, res.From.Head[:12])
				}
				if c.Bool("json") {
					return printJSON(c, res)
				}
				return printLine(c, res.Env.Path)
			})
		},
	}
}
