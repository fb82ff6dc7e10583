//go:build !urfave_cli_no_docs

package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
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
			app := newApp()
			// The synopsis is the usage line, not the global flags; and
			// markdown would take <placeholders> for HTML and drop them.
			cli.MarkdownDocTemplate = strings.Replace(cli.MarkdownDocTemplate, "{{ .App.Name }}\n{{ if .SynopsisArgs }}",
				escape(app.UsageText)+"\n{{ if false }}", 1)
			escapePlaceholders(app.Commands)
			page, err := app.ToManWithSection(1)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, page)
			return err
		},
	}
}

// escapePlaceholders escapes the angle brackets of <placeholders> in the
// commands' texts that markdown reads as text (all but multi-line usage,
// which becomes a code block).
func escapePlaceholders(commands []*cli.Command) {
	for _, c := range commands {
		if !strings.Contains(strings.Trim(c.UsageText, "\n"), "\n") {
			c.UsageText = escape(c.UsageText)
		}
		c.Description = escape(c.Description)
		escapePlaceholders(c.Subcommands)
	}
}

// escape escapes angle brackets for markdown.
var escape = strings.NewReplacer("<", `\<`, ">", `\>`).Replace
