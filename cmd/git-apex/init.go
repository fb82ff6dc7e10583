package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/hooks"
	"github.com/git-apex/git-apex/repo"
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
			path, err := repo.InitPolicy(c.Context, ".", c.Bool("force"))
			if err != nil {
				return err
			}
			note(c, "wrote %s; edit it, then commit it so every clone shares the policy", path)
			note(c, "%s", repo.RuntimeReport(c.Context))
			if err := offerHooks(c); err != nil {
				return err
			}
			return printLine(c, path)
		},
	}
}

// offerHooks asks, on a terminal only, whether to install the git hooks
// that remove merged environments; elsewhere it says how to.
func offerHooks(c *cli.Context) error {
	dir, err := hooks.DirOf(c.Context, ".")
	if err != nil {
		return err
	}
	for _, st := range hooks.Inspect(dir) {
		if st.Installed {
			return nil
		}
	}
	// /dev/null is a character device too: only a real terminal is asked,
	// and an answer cut short by end of input is no.
	if !isTerminal(os.Stdin) {
		note(c, "run `git apex hooks install` to remove merged environments automatically after merges and pulls")
		return nil
	}
	fmt.Fprint(c.App.ErrWriter, "install git hooks that remove merged environments after merges and pulls? [Y/n] ")
	answer, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); err != nil || a != "" && a != "y" && a != "yes" {
		return nil
	}
	list, err := hooks.Install(dir)
	for _, st := range list {
		note(c, "%s", st.Describe())
	}
	return err
}
