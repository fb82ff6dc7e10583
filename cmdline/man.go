//go:build !urfave_cli_no_docs

package cmdline

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// ManPage is the git-apex(1) man page in roff, generated from app (which
// it changes: make it for this alone). The synopsis is the usage line,
// not the global flags; and the <placeholders> that markdown would take
// for HTML and drop are escaped. It is left out of the installed binary
// (the urfave_cli_no_docs tag) with the markdown library behind it.
func ManPage(app *cli.App) (string, error) {
	cli.MarkdownDocTemplate = strings.Replace(cli.MarkdownDocTemplate, "{{ .App.Name }}\n{{ if .SynopsisArgs }}",
		escape(app.UsageText)+"\n{{ if false }}", 1)
	escapePlaceholders(app.Commands)
	return app.ToManWithSection(1)
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
