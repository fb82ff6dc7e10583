// Package hooks installs, uninstalls and inspects the git hooks that call
// back into git-apex (post-merge, post-rewrite and post-commit). What they call, the
// removal of the envs a merge or a rebase has just merged, is the sweep
// package's Hook. It imports no domain package, only gitx to find where
// git runs hooks from.
package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
)

// Names are the hooks git-apex installs: after a merge, a rebase, and a
// commit (a squash merge or a cherry-pick is a commit on the base).
var Names = []string{"post-merge", "post-rewrite", "post-commit"}

// marker identifies a hook script as git-apex's own; uninstall removes
// only files that carry it.
const marker = "# git-apex hook: installed by `git apex hooks install`, removed by `git apex hooks uninstall`."

// SkipVar, set to 1, makes the hooks do nothing. git-apex sets it for
// everything it runs from a hook, so nothing re-enters it.
const SkipVar = "GIT_APEX_SKIP_HOOKS"

// chainedSuffix names a hook that was there before git-apex's: it is kept
// beside it, run first, and put back on uninstall.
const chainedSuffix = ".git-apex-chained"

// script is the hook git-apex installs. It runs the hook it replaced
// first, with the same arguments and input, and exits with its status;
// git-apex itself can never fail the git command, and is skipped when
// the binary is gone. In a repository's own hooks directory (beside its
// HEAD) with no state database, where git-apex has never made an env, it
// does not start git-apex at all.
func script(name string) string {
	return `#!/bin/sh
` + marker + `
# Set ` + SkipVar + `=1 to skip it. A hook that was here before is kept as
# ` + name + chainedSuffix + ` and runs first.
status=0
hooks="$(dirname "$0")"
chained="$hooks/` + name + chainedSuffix + `"
if [ -x "$chained" ]; then
	"$chained" "$@"
	status=$?
fi
if [ -f "$hooks/../HEAD" ] && [ ! -e "$hooks/../apex/state.db" ]; then
	exit $status
fi
if [ "${` + SkipVar + `-}" != 1 ] && command -v git-apex >/dev/null 2>&1; then
	git-apex hook ` + name + ` "$@" </dev/null || true
fi
exit $status
`
}

// Status is the state of one hook.
type Status struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Installed bool   `json:"installed"`         // git-apex's script is there
	Chained   string `json:"chained,omitempty"` // the hook it runs first
	Foreign   bool   `json:"foreign"`           // another hook is there instead
}

// Inspect reports each hook's state in dir.
func Inspect(dir string) []Status {
	var list []Status
	for _, name := range Names {
		path := filepath.Join(dir, name)
		st := Status{Name: name, Path: path}
		if data, err := os.ReadFile(path); err == nil {
			st.Installed = bytes.Contains(data, []byte(marker))
			st.Foreign = !st.Installed
		}
		if st.Installed && isFile(path+chainedSuffix) {
			st.Chained = path + chainedSuffix
		}
		list = append(list, st)
	}
	return list
}

// Install puts git-apex's hooks in dir, keeping any hook already there
// working by chaining it. Installing again rewrites git-apex's scripts
// and leaves the chained hooks as they are.
func Install(dir string) ([]Status, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, st := range Inspect(dir) {
		if st.Foreign {
			if isFile(st.Path + chainedSuffix) {
				return nil, exitcode.New(exitcode.Refused, "cannot install the %s hook: %s is not git-apex's and %s is taken; merge them by hand, then run `git apex hooks install` again",
					st.Name, st.Path, st.Path+chainedSuffix)
			}
			if err := os.Rename(st.Path, st.Path+chainedSuffix); err != nil {
				return nil, err
			}
		}
		tmp := st.Path + ".git-apex-tmp"
		if err := os.WriteFile(tmp, []byte(script(st.Name)), 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, st.Path); err != nil {
			return nil, err
		}
	}
	return Inspect(dir), nil
}

// Uninstall removes git-apex's hooks from dir and puts back the hooks
// they chained. Files without git-apex's marker are never touched.
func Uninstall(dir string) ([]Status, error) {
	var errs []error
	for _, st := range Inspect(dir) {
		if !st.Installed {
			continue
		}
		if err := os.Remove(st.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		if st.Chained != "" {
			errs = append(errs, os.Rename(st.Chained, st.Path))
		}
	}
	return Inspect(dir), errors.Join(errs...)
}

func isFile(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && !info.IsDir()
}

// Describe says in one line where a hook stands.
func (s Status) Describe() string {
	switch {
	case s.Installed && s.Chained != "":
		return fmt.Sprintf("%s: installed at %s, running %s first", s.Name, s.Path, filepath.Base(s.Chained))
	case s.Installed:
		return fmt.Sprintf("%s: installed at %s", s.Name, s.Path)
	case s.Foreign:
		return fmt.Sprintf("%s: not installed; another hook is at %s (install chains it)", s.Name, s.Path)
	}
	return fmt.Sprintf("%s: not installed (%s)", s.Name, s.Path)
}

// DirOf is the directory git runs hooks from for the repository
// containing dir (gitx.Repo.HooksDir).
func DirOf(ctx context.Context, dir string) (string, error) {
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	return repo.HooksDir(ctx)
}
