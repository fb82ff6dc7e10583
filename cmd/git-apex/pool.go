package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/words"
)

// slotJSON is a slot in `pool status --json`.
type slotJSON struct {
	Path       string     `json:"path"`
	Commit     string     `json:"commit"`
	HolderPID  int        `json:"holder_pid,omitempty"`
	LeasedAt   *time.Time `json:"leased_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LeaseState string     `json:"state"` // idle or leased
}

func poolCommand() *cli.Command {
	noArgs := func(c *cli.Context) error {
		_, err := positional(c, 0, 0, "no arguments")
		return err
	}
	return &cli.Command{
		Name:      "pool",
		Usage:     "manage the warm pool of worktrees",
		UsageText: "git apex pool warm [--size N] | status [--json] | drain",
		Description: "Slots are detached worktrees under <git common dir>/apex/pool, kept at the base's commit and made " +
			"and switched with the repository's hooks disabled (an env made from one has not run post-checkout). " +
			"start turns an idle slot into a new worktree env; batch runs tasks in slots.",
		Subcommands: []*cli.Command{
			{
				Name:  "warm",
				Usage: "make slots until the pool has [pool].size (or --size) of them",
				Flags: []cli.Flag{&cli.IntFlag{Name: "size", Usage: "how many slots, instead of [pool].size"}},
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					if c.IsSet("size") && c.Int("size") <= 0 {
						return usageError(c, "--size %d: the pool size must be a positive number", c.Int("size"))
					}
					return withRepo(c, func(r *repo.Repo) error {
						size := c.Int("size")
						if !c.IsSet("size") {
							pol, err := r.Policy()
							if err != nil {
								return err
							}
							size = pol.Pool.Size
						}
						if size <= 0 {
							return usageError(c, "no pool size: set [pool].size in the policy or pass --size N")
						}
						slots, err := pool.New(r).Warm(c.Context, size)
						if err == nil {
							note(c, "the pool has %s", words.Count(len(slots), "slot"))
						}
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
					return withRepo(c, func(r *repo.Repo) error {
						slots, reclaimed, err := pool.New(r).Status(c.Context)
						if err != nil {
							return err
						}
						if reclaimed > 0 {
							note(c, "reclaimed %s whose holder was gone", words.Count(reclaimed, "slot"))
						}
						return printSlots(c, slots)
					})
				},
			},
			{
				Name:  "drain",
				Usage: "remove the idle slots",
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					return withRepo(c, func(r *repo.Repo) error {
						n, err := pool.New(r).Drain(c.Context)
						if err == nil {
							note(c, "removed %d idle slots", n)
						}
						return err
					})
				},
			},
		},
	}
}

func printSlots(c *cli.Context, slots []*state.Slot) error {
	if c.Bool("json") {
		out := []slotJSON{}
		for _, s := range slots {
			v := slotJSON{Path: s.Path, Commit: s.PoolCommit, HolderPID: s.HolderPID, CreatedAt: s.CreatedAt.UTC(), LeaseState: "idle"}
			if s.Leased() {
				t := s.LeasedAt.UTC()
				v.LeasedAt, v.LeaseState = &t, "leased"
			}
			out = append(out, v)
		}
		return printJSON(c, out)
	}
	var rows [][]string
	for _, s := range slots {
		holder := "idle"
		if s.Leased() {
			holder = fmt.Sprintf("pid %d for %s", s.HolderPID, age(time.Since(s.LeasedAt)))
		}
		rows = append(rows, []string{s.Path, repo.Short(s.PoolCommit), holder, age(time.Since(s.CreatedAt))})
	}
	return printTable(c, "", []string{"SLOT", "COMMIT", "HOLDER", "AGE"}, rows)
}
