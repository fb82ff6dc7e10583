package main

import (
	"encoding/json"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/service"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "show the event log, newest last",
		UsageText: "git apex log [--json] [--follow [--after ID]] [<identity>]",
		Description: "Events: created, reused, linked, unlinked, fallback, adopted, closed, preserved, " +
			"finished, skipped, removed, healed, moved, switched, and the API's workflow events running, " +
			"completed and failed. With an identity, that identity's events and its environment's.\n\n" +
			"With --follow, the events recorded from now on are printed as they happen (by any process), until " +
			"interrupted; with an identity, those recorded under it; with --after, those after the event with that id " +
			"(`log --json` shows ids), so a script that resumes misses none. With --json they come one JSON object per line.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array (with --follow, one object per line)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "print new events as they happen"},
			&cli.Int64Flag{Name: "after", Value: -1, Usage: "with --follow, start after the event with id `ID` (default: now)"},
		},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 0, 1, "[<identity>]")
			if err != nil {
				return err
			}
			identity := ""
			if len(args) == 1 {
				identity = args[0]
			}
			if c.IsSet("after") && (!c.Bool("follow") || c.Int64("after") < 0) {
				return cmdline.UsageError(c, "--after takes an event id of 0 or more, and goes with --follow")
			}
			return withService(c, func(s *service.Service) error {
				if c.Bool("follow") {
					return followLog(c, s, identity)
				}
				events, err := s.Log(c.Context, identity)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c, events)
				}
				var rows [][]string
				for _, ev := range events {
					rows = append(rows, cmdline.EventRow(ev))
				}
				return printTable(c, "", []string{"TIME", "IDENTITY", "EVENT", "DETAIL"}, rows)
			})
		},
	}
}

// followLog prints new events until interrupted, which ends it with
// success.
func followLog(c *cli.Context, s *service.Service, identity string) error {
	if identity != "" {
		if _, err := policy.ParseIdentity(identity); err != nil {
			return cmdline.UsageError(c, "%v", err)
		}
	}
	enc := json.NewEncoder(c.App.Writer)
	return s.Follow(c.Context, c.Int64("after"), func(ev service.Event) error {
		if identity != "" && ev.Identity != identity {
			return nil
		}
		if c.Bool("json") {
			return enc.Encode(ev)
		}
		return printLine(c, strings.Join(cmdline.EventRow(ev), "  "))
	})
}
