package cmdline

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/service"
)

// ListFilter picks envs for `git apex list`: each field "" picks all.
type ListFilter struct {
	Mode string // full, worktree or shared
	Glob string // a shell pattern on identities and link aliases
}

// Sorts are the keys `list --sort` takes.
var Sorts = []string{"identity", "created", "updated", "status", "mode"}

// SelectEnvs returns the envs the filter picks, ordered by key ("" keeps
// the order they came in: oldest first).
func SelectEnvs(envs []service.Env, f ListFilter, key string) ([]service.Env, error) {
	if _, err := path.Match(f.Glob, ""); err != nil {
		return nil, fmt.Errorf("invalid pattern %q: %v", f.Glob, err)
	}
	if err := service.CheckMode("mode", f.Mode); err != nil {
		return nil, err
	}
	if key != "" && !slices.Contains(Sorts, key) {
		return nil, fmt.Errorf("invalid --sort %q: use %s", key, strings.Join(Sorts, ", "))
	}
	out := []service.Env{}
	for _, e := range envs {
		if (f.Mode == "" || e.Mode == f.Mode) && (f.Glob == "" || globMatches(f.Glob, e)) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b service.Env) int {
		switch key {
		case "identity":
			return strings.Compare(a.Identity, b.Identity)
		case "created":
			return a.CreatedAt.Compare(b.CreatedAt)
		case "updated":
			return b.UpdatedAt.Compare(a.UpdatedAt) // most recent first
		case "status":
			return strings.Compare(a.Status, b.Status)
		case "mode":
			return strings.Compare(a.Mode, b.Mode)
		}
		return 0
	})
	return out, nil
}

func globMatches(glob string, e service.Env) bool {
	if ok, _ := path.Match(glob, e.Identity); ok {
		return true
	}
	if e.Links != nil {
		for _, l := range *e.Links {
			if ok, _ := path.Match(glob, l.Alias); ok {
				return true
			}
		}
	}
	return false
}

// ListTable is `git apex list`'s table of envs: the env holding cwd is
// marked with "*", paths under $HOME start with "~" and are what is
// shortened to fit width, and statuses are coloured when colour is on.
func ListTable(envs []service.Env, now time.Time, cwd string, colour bool, width int) *Table {
	t := &Table{
		Header: []string{"  IDENTITY", "LINKS", "MODE", "BRANCH", "STATUS", "DIRTY", "AHEAD/BEHIND", "MERGED", "CONTAINER", "AGE", "PATH"},
		// To fit a narrow terminal: container, links, ahead/behind, age,
		// merged and mode go first, then paths are shortened.
		Width: width, Drop: []int{8, 1, 6, 9, 7, 2}, Shrink: 10,
	}
	home, _ := os.UserHomeDir()
	for _, e := range envs {
		var aliases []string
		if e.Links != nil {
			for _, link := range *e.Links {
				aliases = append(aliases, link.Alias)
			}
		}
		identity := "  " + e.Identity
		if e.Status != "destroyed" && cwd != "" && hostpath.Within(cwd, e.Path) {
			identity = "* " + e.Identity
		}
		if e.Closed {
			identity += " (closed)"
		}
		container, merged := "-", "-"
		if e.Git != nil {
			merged = "no"
			if e.Git.Merged {
				merged = "yes"
			}
			if e.Git.Container != "" {
				container = e.Git.Container
				if e.Engine != "" {
					container += " on " + e.Engine
				}
			}
		}
		shown := e.Path
		if rest, ok := strings.CutPrefix(e.Path, home+string(os.PathSeparator)); ok && home != "" {
			shown = "~" + string(os.PathSeparator) + rest
		}
		t.Rows = append(t.Rows, []string{identity, dash(strings.Join(aliases, ",")), e.Mode, BranchOrDetached(e.Branch), statusColumn(e),
			dirtyColumn(e.Git), aheadBehind(e.Git), merged, container, Age(now.Sub(e.CreatedAt)), shown})
	}
	if colour {
		t.Paint = paintList
	}
	return t
}

// statusColumn is an env's status, with the PIDs of the processes that
// work in it: "active (pid 41)", "active (pids 41,42)"; "active
// (missing)" when its directory is gone.
func statusColumn(e service.Env) string {
	if e.Git != nil && e.Git.Missing {
		return e.Status + " (missing)"
	}
	if len(e.Processes) == 0 {
		return e.Status
	}
	pids := make([]string, len(e.Processes))
	for i, p := range e.Processes {
		pids[i] = strconv.Itoa(p.PID)
	}
	if len(pids) == 1 {
		return e.Status + " (pid " + pids[0] + ")"
	}
	return e.Status + " (pids " + strings.Join(pids, ",") + ")"
}

// paintList colours list's cells: the current env, statuses, dirty trees
// and merged branches.
func paintList(_, col int, cell string) string {
	switch {
	case col == 0 && strings.HasPrefix(cell, "* "):
		return Paint(Bold+";"+Green, cell)
	case col == 4 && strings.HasPrefix(cell, "active"):
		return Paint(Green, cell)
	case col == 4 && strings.HasPrefix(cell, "preserved"):
		return Paint(Yellow, cell)
	case col == 4 && cell == "destroyed":
		return Paint(Dim, cell)
	case col == 5 && cell != "-":
		return Paint(Yellow, cell)
	case col == 7 && cell == "yes":
		return Paint(Cyan, cell)
	}
	return cell
}

// BranchOrDetached is a branch's name, or "(detached)" for none.
func BranchOrDetached(branch string) string {
	if branch == "" {
		return "(detached)"
	}
	return branch
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// dirtyColumn is "-" for a clean tree, else what is uncommitted; "?"
// when git could not say.
func dirtyColumn(g *service.Git) string {
	switch {
	case g == nil || g.Problem != "":
		return "?"
	case !g.Dirty:
		return "-"
	}
	return gitx.Changes{Staged: g.Staged, Modified: g.Modified, Untracked: g.Untracked}.String()
}

func aheadBehind(g *service.Git) string {
	if g == nil || g.Ahead == nil {
		return "-"
	}
	return fmt.Sprintf("+%d/-%d", *g.Ahead, *g.Behind)
}

// Age prints a duration the way a person reads it at a glance.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
