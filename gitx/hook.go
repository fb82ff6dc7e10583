package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HookView is what a git hook needs to decide, cheaply, whether anything
// could have merged: the repository, the branch HEAD is on, and every
// local branch's tip, all read by one git process.
type HookView struct {
	*Repo
	Branch string            // the branch HEAD is on, short; "" when HEAD is detached
	Tips   map[string]string // every local branch's tip, by short name
}

// OpenHookView opens the repository dir belongs to, as a hook sees it,
// with one `git rev-parse`. It fails where a hook has nothing to do: a
// bare repository's own directory, or no commits yet.
func OpenHookView(ctx context.Context, dir string) (*HookView, error) {
	// rev-parse prints every branch's tip, then, after
	// --symbolic-full-name, every branch's name in the same order.
	args := []string{"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel",
		"HEAD", "--branches", "--symbolic-full-name", "HEAD", "--branches"}
	out, err := run(ctx, command{dir: dir, args: args, env: locatingEnv()})
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// dirs (3), HEAD, n tips, HEAD's name, n names
	if len(lines) < 5 || len(lines)%2 != 1 {
		return nil, fmt.Errorf("cannot read git rev-parse output: %q", out)
	}
	n := (len(lines) - 5) / 2
	tips, names := lines[4:4+n], lines[5+n:]
	v := &HookView{Repo: openedRepo(lines[0], lines[1], lines[2], lines[3]), Tips: make(map[string]string, n)}
	v.Branch, _ = strings.CutPrefix(lines[4+n], "refs/heads/")
	if v.Branch == lines[4+n] {
		v.Branch = "" // detached
	}
	for i, name := range names {
		short, ok := strings.CutPrefix(name, "refs/heads/")
		if !ok {
			return nil, fmt.Errorf("cannot read git rev-parse output: %q is not a branch", name)
		}
		v.Tips[short] = tips[i]
	}
	return v, nil
}

// OrigHead is the commit ORIG_HEAD names in the hook's working tree (a
// merge or a rebase sets it to where HEAD was), read from its file, or
// "" when there is none or it is not a plain commit id.
func (v *HookView) OrigHead() string {
	data, err := os.ReadFile(filepath.Join(v.GitDir, "ORIG_HEAD"))
	id := strings.TrimSpace(string(data))
	if err != nil || !IsObjectID(id) {
		return ""
	}
	return id
}

// IsObjectID reports whether s is a full SHA-1 or SHA-256 object id.
func IsObjectID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && strings.Trim(s, "0123456789abcdef") == ""
}

// Brought is what a range of commits brought to a branch: the commits
// in it, and every path any of them changed (a merge commit: against its
// first parent), as ChangedPaths prints them.
type Brought struct {
	Commits map[string]bool
	Paths   map[string]bool
}

// Brought reads the commits reachable from to and not from from, and the
// paths they changed, with one `git log`.
func (v *HookView) Brought(ctx context.Context, from, to string) (Brought, error) {
	out, err := v.readIn(ctx, v.CommonDir, "log", "--no-renames", "--name-only", "--diff-merges=first-parent",
		"--format=%x00%H", from+".."+to, "--")
	b := Brought{Commits: map[string]bool{}, Paths: map[string]bool{}}
	if err != nil {
		return b, err
	}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "\x00"):
			b.Commits[line[1:]] = true
		case line != "":
			b.Paths[line] = true
		}
	}
	return b, nil
}
