package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/state"
)

// envJSON is the JSON shape of an environment in `start --json` and
// `list --json`; the README documents it.
type envJSON struct {
	Identity    string            `json:"identity"`
	Workflow    string            `json:"workflow"`
	Name        string            `json:"name"`
	Mode        string            `json:"mode"`
	ModeAsked   string            `json:"mode_asked"`
	Container   string            `json:"container,omitempty"` // full envs: the container's id
	Path        string            `json:"path"`
	Branch      string            `json:"branch"`
	Base        string            `json:"base"`
	StartCommit string            `json:"start_commit"`
	Status      string            `json:"status"`
	Metadata    map[string]string `json:"metadata"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
	Links       *[]linkJSON       `json:"links,omitempty"`  // list only
	Git         *gitJSON          `json:"git,omitempty"`    // list only, live envs
	Reused      *bool             `json:"reused,omitempty"` // start only
}

// gitJSON is what git says of a live env in `list --json`.
type gitJSON struct {
	Dirty        bool   `json:"dirty"`
	Staged       int    `json:"staged"`
	Modified     int    `json:"modified"`
	Untracked    int    `json:"untracked"`
	Ahead        *int   `json:"ahead,omitempty"`  // commits its base lacks
	Behind       *int   `json:"behind,omitempty"` // base commits it lacks
	Merged       bool   `json:"merged"`
	MergedReason string `json:"merged_reason,omitempty"`
	Container    string `json:"container,omitempty"` // full envs: the container's state
	Problem      string `json:"problem,omitempty"`   // what could not be read
}

// linkJSON is a link in `list --json`.
type linkJSON struct {
	Alias string `json:"alias"`
	Kind  string `json:"kind"` // "link" or "parent"
}

func envView(e *state.Env) envJSON {
	meta := e.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	return envJSON{
		Identity: e.Identity, Workflow: e.Workflow, Name: e.Name, Mode: e.Mode, ModeAsked: e.ModeAsked,
		Path: e.Path, Branch: e.Branch, Base: e.Base, StartCommit: e.StartCommit, Status: string(e.Status), Container: e.Container,
		Metadata: meta, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
	}
}

// describe says in a few words what an env is.
func describe(e *state.Env) string {
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
