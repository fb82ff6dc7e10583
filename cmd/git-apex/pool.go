package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
	"github.com/git-apex/git-apex/words"
)

func poolCommand() *cli.Command {
	noArgs := func(c *cli.Context) error {
		_, err := cmdline.Positional(c, 0, 0, "no arguments")
		return err
	}
	return &cli.Command{
		Name:      "pool",
		Usage:     "manage the warm pool of worktrees and containers",
		UsageText: "git apex pool warm [--size N] [--containers N] | status [--json] | drain",
		Description: "Slots are detached worktrees under <git common dir>/apex/pool, kept at the base's commit and made " +
			"and switched with the repository's hooks disabled (an env made from one has not run post-checkout). " +
			"start turns an idle slot into a new worktree env; batch runs tasks in slots.",
		Subcommands: []*cli.Command{
			{
				Name: "warm",
				Usage: "make slots until the pool has [pool].size (or --size) of them, and warm containers until each " +
					"engine has [pool].containers (or --containers)",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "size", Usage: "how many slots, instead of [pool].size"},
					&cli.IntFlag{Name: "containers", Usage: "how many warm containers on each engine, instead of [pool].containers"},
				},
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					given := func(flag string) *int { // nil: the policy's
						if !c.IsSet(flag) {
							return nil
						}
						n := c.Int(flag)
						return &n
					}
					req, err := service.PoolWarmRequestOf("--size", given("size"), "--containers", given("containers"))
					if err != nil {
						return cmdline.UsageError(c, "%v", err)
					}
					return withService(c, func(s *service.Service) error {
						_, err := s.PoolWarm(c.Context, req)
						return err
					})
				},
			},
			{
				Name:  "status",
				Usage: "list the slots, their commit and holder; reclaim those whose holder died",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON array"}},
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					return withService(c, func(s *service.Service) error {
						status, err := s.PoolStatus(c.Context)
						if err != nil {
							return err
						}
						report := status.Report
						if status.Reclaimed > 0 {
							note(c, "reclaimed %s whose holder was gone", words.Count(status.Reclaimed, "slot"))
						}
						if c.Bool("json") {
							return printJSON(c, report)
						}
						note(c, "%d available, %d leased, %d in all; %d waiting for a slot", report.Available, report.Leased, report.Total, report.Waiting)
						return printTable(c, "", []string{"SLOT", "COMMIT", "HOLDER", "CONTAINER", "AGE"}, cmdline.SlotRows(report, time.Now()))
					})
				},
			},
			{
				Name:  "drain",
				Usage: "remove the idle slots; with --all, refuse while running processes hold others",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "empty the pool: exit 3 naming the slots running processes still hold"}, cmdline.KillFlag,
					&cli.BoolFlag{Name: "force", Usage: "delete the untracked nested repositories made in idle slots too, which the trash cannot keep (without it, exit 3 naming them)"}},
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					return withService(c, func(s *service.Service) error {
						drained, err := s.PoolDrain(c.Context, service.PoolDrainRequest{All: c.Bool("all"), Kill: c.Bool("kill"), Force: c.Bool("force")})
						note(c, "removed %s", words.Count(drained.Removed, "idle slot"))
						for _, e := range drained.Trash {
							note(c, "%s", cmdline.TrashNote(&e, e.Path))
						}
						return err
					})
				},
			},
		},
	}
}
