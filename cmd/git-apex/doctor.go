package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hooks"
	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/state"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "report where the state, git and the file system disagree; --fix repairs what is safe",
		UsageText: "git apex doctor [--fix] [--json]",
		Description: "Checks the state database, the policy, every environment against git (deleted, moved, or switched " +
			"by hand), unknown worktrees under the environment root, git's registrations of deleted worktrees, stale git " +
			"lock files, and the hooks. Exits 3 when problems remain.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "fix", Usage: "repair what is safe to repair"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array"},
		},
		Action: func(c *cli.Context) error {
			if _, err := positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			var rebuilt []isolation.Finding
			run := func(m *isolation.Manager) error {
				findings, err := m.Doctor(c.Context, c.Bool("fix"))
				if err != nil {
					return err
				}
				findings = append(append(rebuilt, findings...), hookFindings(c, m)...)
				return printFindings(c, findings)
			}
			err := withManager(c, run)
			var damaged *state.DamagedError
			if !errors.As(err, &damaged) {
				return err
			}
			if !c.Bool("fix") {
				return printFindings(c, []isolation.Finding{{Check: "state", Status: "problem", Detail: damaged.Error()}})
			}
			if rebuilt, err = isolation.RebuildState(c.Context, ".", managerOptions(c)); err != nil {
				return err
			}
			return withManager(c, run)
		},
	}
}

// printFindings prints doctor's report and fails (exit 3) while problems
// remain.
func printFindings(c *cli.Context, findings []isolation.Finding) error {
	problems := 0
	for _, f := range findings {
		if f.Status == "problem" {
			problems++
		}
	}
	if c.Bool("json") {
		if err := printJSON(c, findings); err != nil {
			return err
		}
	} else {
		w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "STATUS\tCHECK\tDETAIL")
		for _, f := range findings {
			fmt.Fprintf(w, "%s\t%s\t%s\n", f.Status, f.Check, f.Detail)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if problems > 0 {
		return exitcode.New(exitcode.Refused, "%d problems remain", problems)
	}
	return nil
}

// hookFindings says whether the hooks are installed where git runs
// hooks, and whether core.hooksPath shadows ones installed elsewhere.
func hookFindings(c *cli.Context, m *isolation.Manager) []isolation.Finding {
	dir, err := m.Git.HooksDir(c.Context)
	if err != nil {
		return []isolation.Finding{{Check: "hooks", Status: "problem", Detail: err.Error()}}
	}
	var out []isolation.Finding
	for _, st := range hooks.Inspect(dir) {
		status := "ok"
		detail := st.Describe()
		if !st.Installed {
			status, detail = "problem", detail+"; `git apex hooks install` installs it"
		}
		out = append(out, isolation.Finding{Check: "hook " + st.Name, Status: status, Detail: detail})
	}
	if plain := filepath.Join(m.Git.CommonDir, "hooks"); plain != dir {
		for _, st := range hooks.Inspect(plain) {
			if st.Installed {
				out = append(out, isolation.Finding{Check: "hook " + st.Name, Status: "problem",
					Detail: fmt.Sprintf("installed at %s, which core.hooksPath shadows: git runs hooks from %s; run `git apex hooks install` again", st.Path, dir)})
			}
		}
	}
	return out
}
