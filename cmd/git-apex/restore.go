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
		UsageText: "git apex restore [--branch <name>] [--json] <identity> | restore --list [--json]",
		Description: "remove --force, close --force and pool drain keep the work they discard (uncommitted files, and commits nothing else holds) in the trash for [trash].keep (default 14d). restore makes the environment " +
			"again (same mode, branch and base; a deleted branch at its tip) with every file as it was, staged state included, and drops the entry; exit 3 while the " +
			"identity is live or its branch has moved from that tip (--branch <new> then restores onto a new branch there), 7 when the trash has nothing of it.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "list", Usage: "show what the trash holds, newest first"}, jsonFlag,
			&cli.StringFlag{Name: "branch", Usage: "make the environment on branch `name` instead of the entry's own: a new one made at the commit the work was discarded from, or one already there"}},
		Action: func(c *cli.Context) error {
			if c.Bool("list") {
				if _, err := cmdline.Positional(c, 0, 0, "--list alone"); err != nil || c.IsSet("branch") {
					return cmdline.UsageError(c, "--list goes alone: no <identity>, no --branch")
				}
				return withService(c, func(s *service.Service) error {
					entries, err := s.Trash(c.Context)
					switch {
					case err != nil:
						return err
					case c.Bool("json"):
						return printJSON(c, entries)
					}
					return printTable(c, "the trash is empty", []string{"IDENTITY", "DISCARDED", "FILES", "BRANCH", "PATH"}, cmdline.TrashRows(entries))
				})
			}
			args, err := cmdline.Positional(c, 1, 1, "<identity>, or --list alone")
			if err != nil {
				return err
			}
			return withService(c, func(s *service.Service) error {
				res, err := s.Restore(c.Context, args[0], service.RestoreOptions{Branch: c.String("branch")})
				if err != nil {
					return err
				}
				for _, line := range cmdline.RestoreNotes(res) {
					note(c, "%s", line)
				}
				if c.Bool("json") {
					return printJSON(c, res)
				}
				return printLine(c, res.Env.Path)
			})
		},
	}
}
