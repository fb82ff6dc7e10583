package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/repo"
)

// printTable prints rows of cells under a header, in aligned columns.
// When there are no rows and empty is not "", it prints only empty, as a
// note on stderr.
func printTable(c *cli.Context, empty string, header []string, rows [][]string) error {
	if len(rows) == 0 && empty != "" {
		note(c, "%s", empty)
		return nil
	}
	return (&cmdline.Table{Header: header, Rows: rows, Shrink: -1}).Write(c.App.Writer)
}

// colour says whether to colour stdout: --color, the user's apex.color
// or color.ui, NO_COLOR and whether it is a terminal decide
// (cmdline.UseColour). The flag's value was checked before the command
// ran.
func colour(c *cli.Context, r *repo.Repo) bool {
	setting := ""
	if c.String("color") == "auto" {
		setting = r.Personal(c.Context).Color
	}
	on, _ := cmdline.UseColour(c.String("color"), setting, os.Stdout)
	return on
}

// jsonFlag is every command's --json: its result in the one JSON
// vocabulary (docs/schema) on stdout, instead of the human words.
var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print the result as JSON (its schema is in docs/schema)"}

// printJSON prints v as indented JSON.
func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printIfJSON prints v as JSON under --json, else nothing.
func printIfJSON(c *cli.Context, v any) error {
	if c.Bool("json") {
		return printJSON(c, v)
	}
	return nil
}

func printLine(c *cli.Context, s string) error {
	_, err := fmt.Fprintln(c.App.Writer, s)
	return err
}
