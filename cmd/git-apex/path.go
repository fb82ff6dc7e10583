package main

import "github.com/urfave/cli/v2"

func pathCommand() *cli.Command {
	return &cli.Command{
		Name:      "path",
		Usage:     "print the path of an environment",
		UsageText: "git apex path <identity>",
		Action: func(c *cli.Context) error {
			args, err := positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			m, err := openManager(c)
			if err != nil {
				return err
			}
			defer m.Close()
			path, err := m.Path(c.Context, args[0])
			if err != nil {
				return err
			}
			return printLine(c, path)
		},
	}
}
