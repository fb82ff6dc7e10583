package main

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Aliases:   []string{"ls"},
		Usage:     "list environments",
		UsageText: "git apex list [--all] [--json] [--sort KEY] [--status STATUS] [--mode MODE] [<pattern>]",
		Description: "The environment you are in is marked with *. A pattern (a shell glob, quoted) picks identities or " +
			"link aliases. On a terminal the table fits its width, shortening paths.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "include destroyed environments"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array"},
			&cli.StringFlag{Name: "sort", Usage: "order by `KEY`: identity, created, updated (newest first), status or mode"},
			&cli.StringFlag{Name: "status", Usage: "only environments in `STATUS`: active, preserved, destroyed, live (active and preserved, the default) or all"},
			&cli.StringFlag{Name: "mode", Usage: "only environments in `MODE`: full, worktree or shared"},
		},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 0, 1, "at most one <pattern>")
			if err != nil {
				return err
			}
			filter := cmdline.ListFilter{Mode: c.String("mode")}
			if len(args) == 1 {
				filter.Glob = args[0]
			}
			status := c.String("status")
			if status == "" && c.Bool("all") {
				status = service.All
			}
			return withRepo(c, func(r *repo.Repo) error {
				envs, err := service.New(r).List(c.Context, status)
				if err != nil {
					return err
				}
				if envs, err = cmdline.SelectEnvs(envs, filter, c.String("sort")); err != nil {
					return cmdline.UsageError(c, "%v", err)
				}
				if c.Bool("json") {
					return printJSON(c, envs)
				}
				if len(envs) == 0 {
					note(c, "no environments; `git apex start <workflow> <name>` makes one")
					return nil
				}
				now := time.Now()
				if clock != nil {
					now = clock()
				}
				cwd, _ := os.Getwd()
				return cmdline.ListTable(envs, now, cwd, colour(c, r), cmdline.Width(os.Stdout)).Write(c.App.Writer)
			})
		},
	}
}
