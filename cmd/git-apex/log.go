package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/isolation"
)

// eventJSON is an event in `log --json`.
type eventJSON struct {
	Time     time.Time `json:"time"`
	Identity string    `json:"identity"`
	Event    string    `json:"event"`
	Detail   string    `json:"detail"`
}

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "show the event log, newest last",
		UsageText: "git apex log [--json] [<identity>]",
		Description: "Events: created, reused, linked, unlinked, fallback, adopted, closed, preserved, " +
			"finished, skipped, removed, healed, moved, switched. With an identity, that identity's " +
			"events and its environment's.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array"},
		},
		Action: func(c *cli.Context) error {
			args, err := positional(c, 0, 1, "[<identity>]")
			if err != nil {
				return err
			}
			identity := ""
			if len(args) == 1 {
				identity = args[0]
			}
			return withManager(c, func(m *isolation.Manager) error {
				events, err := m.Log(c.Context, identity)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					out := make([]eventJSON, 0, len(events))
					for _, ev := range events {
						out = append(out, eventJSON{Time: ev.At.UTC(), Identity: ev.Identity, Event: ev.Kind, Detail: ev.Detail})
					}
					return printJSON(c, out)
				}
				var rows [][]string
				for _, ev := range events {
					rows = append(rows, []string{ev.At.Local().Format("2006-01-02 15:04:05"), ev.Identity, ev.Kind, ev.Detail})
				}
				return printTable(c, "", []string{"TIME", "IDENTITY", "EVENT", "DETAIL"}, rows)
			})
		},
	}
}
