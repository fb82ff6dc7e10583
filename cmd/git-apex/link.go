package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
)

func linkCommand() *cli.Command {
	return &cli.Command{
		Name:      "link",
		Usage:     "make another identity resolve to an existing environment",
		UsageText: "git apex link [--json] <alias> [<identity>]",
		Flags:     []cli.Flag{jsonFlag},
		Description: "Without <identity>, links to the environment whose worktree holds the current directory. " +
			"Every command that takes an identity accepts the alias.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 2, "<alias> [<identity>]")
			if err != nil {
				return err
			}
			target := ""
			if len(args) == 2 {
				target = args[1]
			}
			cwd, _ := os.Getwd()
			return withService(c, func(s *service.Service) error {
				env, err := s.Link(c.Context, args[0], target, cwd)
				if err != nil {
					return err
				}
				note(c, "%s now resolves to %s (%s)", args[0], env.Identity, env.Path)
				return printEnv(c, env)
			})
		},
	}
}

func unlinkCommand() *cli.Command {
	return &cli.Command{
		Name:      "unlink",
		Usage:     "drop a link",
		UsageText: "git apex unlink [--json] <alias>",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<alias>")
			if err != nil {
				return err
			}
			return withService(c, func(s *service.Service) error {
				env, err := s.Unlink(c.Context, args[0])
				if err != nil {
					return err
				}
				note(c, "%s no longer resolves to %s", args[0], env.Identity)
				return printEnv(c, env)
			})
		},
	}
}

// printEnv prints the env link or unlink resolved to, under --json.
func printEnv(c *cli.Context, env *service.Env) error {
	return printIfJSON(c, env)
}
