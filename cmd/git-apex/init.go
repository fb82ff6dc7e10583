package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/hooks"
	"github.com/git-apex/git-apex/repo"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented .apex.toml policy at the top of the main checkout",
		UsageText: "git apex init [--force] [--json]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing .apex.toml"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			path, err := repo.InitPolicy(c.Context, ".", c.Bool("force"))
			if err != nil {
				return err
			}
			note(c, "wrote %s; edit it, then commit it so every clone shares the policy", path)
			runtime := repo.RuntimeReport(c.Context)
			note(c, "%s", runtime)
			dir, err := hooks.DirOf(c.Context, ".")
			if err != nil {
				return err
			}
			installed, err := hooks.Offer(dir, isTerminal(os.Stdin), os.Stdin, c.App.ErrWriter)
			for _, st := range installed {
				note(c, "%s", st.Describe())
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, repo.InitReport{Path: path, Runtime: runtime, Hooks: hooks.Inspect(dir)})
			}
			return printLine(c, path)
		},
	}
}
