package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
)

func startCommand() *cli.Command {
	return &cli.Command{
		Name:      "start",
		Usage:     "make or reuse the environment of a unit of work and print its path",
		UsageText: "git apex start [flags] <workflow> <name>\ngit apex start [flags] <identity>",
		Description: "The identity is <workflow>-<name>, like feature-login or issue-42. An existing environment is reused " +
			"(its path printed, nothing made); one whose directory was deleted is made again. The mode comes from " +
			"--isolation, else [workflow.X].isolation, else [isolation.overrides].X, else [isolation].default, else worktree.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "isolation", Usage: "isolation `MODE`: full, worktree or shared"},
			&cli.StringFlag{Name: "from", Usage: "start from `COMMIT-ISH`; a branch also becomes the base"},
			&cli.StringFlag{Name: "branch", Usage: "use branch `NAME` instead of the policy's template (an existing branch is checked out)"},
			&cli.BoolFlag{Name: "strict", Usage: "fail instead of falling back to a weaker mode"},
			&cli.BoolFlag{Name: "detach", Usage: "check out the start commit with no branch (for reviews)"},
			&cli.StringFlag{Name: "parent", Usage: "work in the environment of `IDENTITY`, as its sub-task"},
			&cli.BoolFlag{Name: "json", Usage: "print the environment as JSON"},
			&cli.BoolFlag{Name: "cd", Usage: "change the shell's directory to it (needs the function git apex shell-init prints)"},
			&cli.StringFlag{Name: "exec", Usage: "then run `COMMAND` (sh -c) in it, in a full environment's container, and exit with its code"},
			&cli.BoolFlag{Name: "host", Usage: "with --exec, run it on the host in the worktree even in a full environment"},
		},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 2, "<workflow> <name> or <identity>")
			if err != nil {
				return err
			}
			if c.Bool("cd") && c.Bool("json") || c.IsSet("exec") && (c.Bool("cd") || c.Bool("json")) {
				return cmdline.UsageError(c, "--cd, --json and --exec do not go together: each wants stdout for itself")
			}
			req := service.StartRequest{Isolation: c.String("isolation"), From: c.String("from"), Branch: c.String("branch"),
				Strict: c.Bool("strict"), Detach: c.Bool("detach"), Parent: c.String("parent")}
			if len(args) == 2 {
				req.Workflow, req.Name = args[0], args[1]
			} else {
				req.Identity = args[0]
			}
			return withService(c, func(s *service.Service) error {
				res, err := s.Start(c.Context, req)
				if err != nil {
					return err
				}
				if res.Created() {
					note(c, "created %s: %s", res.Env.Identity, cmdline.Describe(res.Env))
				}
				switch {
				case c.IsSet("exec"):
					return runWith(c, s, service.ExecRequest{Identity: res.Env.Identity,
						Cmd: []string{"sh", "-c", c.String("exec")}, Host: c.Bool("host")})
				case c.Bool("json"):
					return printJSON(c, res.Env)
				}
				return printLine(c, res.Env.Path)
			})
		},
	}
}
