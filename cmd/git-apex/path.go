package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
)

func pathCommand() *cli.Command {
	return &cli.Command{
		Name:      "path",
		Usage:     "print the path of an environment",
		UsageText: "git apex path [--json] <identity>",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			return withService(c, func(s *service.Service) error {
				path, err := s.Path(c.Context, args[0])
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c, service.Location{Identity: args[0], Path: path})
				}
				return printLine(c, path)
			})
		},
	}
}
