//go:build !urfave_cli_no_docs

package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
)

// The man page generator is left out of the installed binary (built with
// the urfave_cli_no_docs tag): the markdown library behind it costs half
// a millisecond at every start. install.sh runs it from a build without
// the tag.
func init() {
	optionalCommands = append(optionalCommands, manCommand())
}

// manCommand prints the man page generated from this command line, so the
// page installed as git-apex.1 (which `git apex --help` shows) never drifts.
func manCommand() *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "print the git-apex(1) man page in roff",
		Hidden: true,
		Action: func(c *cli.Context) error {
			page, err := cmdline.ManPage(newApp())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, page)
			return err
		},
	}
}
