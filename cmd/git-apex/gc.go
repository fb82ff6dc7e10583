package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:      "gc",
		Usage:     "remove merged and inactive environments; find and repair orphans",
		UsageText: "git apex gc [--merged] [--older-than DURATION] [--orphans] [--dry-run] [--force] [--kill] [--json]",
		Description: "Without --merged, --older-than or --orphans: --merged and --older-than [worktree].stale_after. " +
			"Environments are removed only when `git apex remove` would (never with uncommitted work); a merged " +
			"environment's branch is deleted when [worktree].delete_merged_branches. Inactive means no commit and no " +
			"git-apex use for the duration. --orphans lists worktrees under the environment root that git-apex does not " +
			"know (--force adopts them), marks environments whose worktree is gone destroyed, and prunes git's " +
			"registrations of deleted worktrees it made (never one the user added by hand: it may have been moved). Locked worktrees are kept, with their reason.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "merged", Usage: "remove environments whose branch is merged into its base"},
			&cli.StringFlag{Name: "older-than", Usage: "remove environments inactive for longer than `DURATION` (30m, 12h, 7d, 2w)"},
			&cli.BoolFlag{Name: "orphans", Usage: "find what git and git-apex disagree on"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would be done; change nothing"},
			&cli.BoolFlag{Name: "force", Usage: "with --orphans, adopt unknown worktrees"},
			cmdline.KillFlag,
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array"},
		},
		Action: func(c *cli.Context) error {
			if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			req := service.GCRequest{Merged: c.Bool("merged"), Orphans: c.Bool("orphans"), DryRun: c.Bool("dry-run"), Force: c.Bool("force"), Kill: c.Bool("kill")}
			if s := c.String("older-than"); s != "" {
				d, err := service.ParseDuration("--older-than", s)
				if err != nil {
					return cmdline.UsageError(c, "%v", err)
				}
				req.OlderThan = d
			}
			req.Cwd, _ = os.Getwd()
			return withService(c, func(s *service.Service) error {
				items, err := s.GC(c.Context, req)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c, items)
				}
				var rows [][]string
				for _, it := range items {
					rows = append(rows, []string{it.Action, it.What(), it.Reason})
				}
				return printTable(c, "nothing to do", []string{"ACTION", "TARGET", "REASON"}, rows)
			})
		},
	}
}
