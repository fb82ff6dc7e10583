package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/service"
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
			status := service.Live
			if c.Bool("all") {
				status = service.All
			}
			return withService(c, func(s *service.Service) error {
				envs, err := s.List(c.Context, status)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c, envs)
				}
				return printList(c, envs)
			})
		},
	}
}

// printList prints envs as a table.
func printList(c *cli.Context, envs []service.Env) error {
	var rows [][]string
	now := time.Now()
	if clock != nil {
		now = clock()
	}
	for _, e := range envs {
		aliases := []string{}
		for _, link := range *e.Links {
			aliases = append(aliases, link.Alias)
		}
		links := strings.Join(aliases, ",")
		if links == "" {
			links = "-"
		}
		identity := e.Identity
		if e.Closed {
			identity += " (closed)"
		}
		container, merged := "-", "-"
		if e.Git != nil {
			merged = "no"
			if e.Git.Merged {
				merged = "yes"
			}
			if e.Git.Container != "" {
				container = e.Git.Container
			}
		}
		rows = append(rows, []string{identity, links, e.Mode, branchOrDetached(e.Branch), e.Status,
			dirtyColumn(e.Git), aheadBehind(e.Git), merged, container, age(now.Sub(e.CreatedAt)), e.Path})
	}
	return printTable(c, "no environments; `git apex start <workflow> <name>` makes one",
		[]string{"IDENTITY", "LINKS", "MODE", "BRANCH", "STATUS", "DIRTY", "AHEAD/BEHIND", "MERGED", "CONTAINER", "AGE", "PATH"}, rows)
}

// dirtyColumn is "-" for a clean tree, else what is uncommitted; "?"
// when git could not say.
func dirtyColumn(g *service.Git) string {
	switch {
	case g == nil || g.Problem != "":
		return "?"
	case !g.Dirty:
		return "-"
	}
	return gitx.Changes{Staged: g.Staged, Modified: g.Modified, Untracked: g.Untracked}.String()
}

func aheadBehind(g *service.Git) string {
	if g == nil || g.Ahead == nil {
		return "-"
	}
	return fmt.Sprintf("+%d/-%d", *g.Ahead, *g.Behind)
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
