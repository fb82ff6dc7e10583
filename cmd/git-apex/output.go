package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/service"
)

// describe says in a few words what an env is.
func describe(e service.Env) string {
	return fmt.Sprintf("%s on %s from %s, at %s", e.Mode, branchOrDetached(e.Branch), e.Base, e.Path)
}

func branchOrDetached(branch string) string {
	if branch == "" {
		return "(detached)"
	}
	return branch
}

// printTable prints rows of cells under a header, in aligned columns.
// When there are no rows and empty is not "", it prints only empty, as a
// note on stderr.
func printTable(c *cli.Context, empty string, header []string, rows [][]string) error {
	if len(rows) == 0 && empty != "" {
		note(c, "%s", empty)
		return nil
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, row := range rows {
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	return w.Flush()
}

// printJSON prints v as indented JSON.
func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printLine(c *cli.Context, s string) error {
	_, err := fmt.Fprintln(c.App.Writer, s)
	return err
}
