package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/isolation"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Aliases:   []string{"ls"},
		Usage:     "list environments",
		UsageText: "git apex list [--all] [--json]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "include destroyed environments"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array"},
		},
		Action: func(c *cli.Context) error {
			if _, err := positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			return withManager(c, func(m *isolation.Manager) error {
				envs, err := m.List(c.Context, c.Bool("all"))
				if err != nil {
					return err
				}
				return printList(c, envs)
			})
		},
	}
}

// printList prints envs as a table, or as JSON with --json.
func printList(c *cli.Context, envs []isolation.Listed) error {
	if c.Bool("json") {
		views := make([]envJSON, 0, len(envs))
		for _, l := range envs {
			v := envView(l.Env)
			links := []linkJSON{}
			for _, link := range l.Links {
				links = append(links, linkJSON{Alias: link.Alias, Kind: link.Kind})
			}
			v.Links = &links
			if l.Env.Live() {
				g := &gitJSON{Merged: l.Merged != "", MergedReason: l.Merged, Problem: l.Problem, Container: l.Container}
				if l.Changes != nil {
					g.Dirty, g.Staged, g.Modified, g.Untracked = l.Changes.Dirty(), l.Changes.Staged, l.Changes.Modified, l.Changes.Untracked
				}
				if l.Counted {
					g.Ahead, g.Behind = &l.Ahead, &l.Behind
				}
				v.Git = g
			}
			views = append(views, v)
		}
		return printJSON(c, views)
	}
	var rows [][]string
	for _, l := range envs {
		e := l.Env
		aliases := []string{}
		for _, link := range l.Links {
			aliases = append(aliases, link.Alias)
		}
		links := strings.Join(aliases, ",")
		if links == "" {
			links = "-"
		}
		identity := e.Identity
		if e.IdentityClosed {
			identity += " (closed)"
		}
		container := l.Container
		if container == "" {
			container = "-"
		}
		rows = append(rows, []string{identity, links, e.Mode, branchOrDetached(e.Branch), string(e.Status),
			dirtyColumn(l), aheadBehind(l), yesNo(l.Merged != "", e.Live()), container, age(l.Age), e.Path})
	}
	return printTable(c, "no environments; `git apex start <workflow> <name>` makes one",
		[]string{"IDENTITY", "LINKS", "MODE", "BRANCH", "STATUS", "DIRTY", "AHEAD/BEHIND", "MERGED", "CONTAINER", "AGE", "PATH"}, rows)
}

// dirtyColumn is "-" for a clean tree, else what is uncommitted.
func dirtyColumn(l isolation.Listed) string {
	switch {
	case l.Changes == nil:
		return "?"
	case !l.Changes.Dirty():
		return "-"
	}
	return l.Changes.String()
}

func aheadBehind(l isolation.Listed) string {
	if !l.Counted {
		return "-"
	}
	return fmt.Sprintf("+%d/-%d", l.Ahead, l.Behind)
}

func yesNo(yes, known bool) string {
	switch {
	case !known:
		return "-"
	case yes:
		return "yes"
	}
	return "no"
}

// age prints a duration the way a person reads it at a glance.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
