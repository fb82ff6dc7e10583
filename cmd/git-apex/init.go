package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/isolation"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented .apex.toml policy at the top of the main checkout",
		UsageText: "git apex init [--force]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing .apex.toml"},
		},
		Action: func(c *cli.Context) error {
			if _, err := positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			path, err := isolation.InitPolicy(c.Context, ".", c.Bool("force"))
			if err != nil {
				return err
			}
			note(c, "wrote %s; edit it, then commit it so every clone shares the policy", path)
			return printLine(c, path)
		},
	}
}
