package repo

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hooks"
	"github.com/git-apex/git-apex/policy"
)

// RuntimeReport says whether a container runtime answers, for init.
func RuntimeReport(ctx context.Context) string {
	rt, _, version, err := connect(ctx, time.Duration(policy.Default().Container.ConnectTimeout))
	if err != nil {
		return fmt.Sprintf("container runtime: none answers (%v): full isolation would fall back to worktrees", err)
	}
	rt.Close()
	return "container runtime: " + version + " answers: full isolation is available"
}

// InitPolicy writes the policy template as .apex.toml at the top of the
// main checkout of the repository containing dir, and returns its path
// (see policy.WriteTemplate). A bare repository has no main checkout:
// the file goes to the top of the worktree dir is in, and in the bare
// directory itself it is a usage error. Unlike the other commands it works in a
// repository with no commits.
func InitPolicy(ctx context.Context, dir string, force bool) (string, error) {
	git, err := gitx.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	top := git.MainRoot()
	if git.Bare && git.Toplevel == git.GitDir {
		return "", exitcode.New(exitcode.Usage, "cannot write %s in %s, a bare repository: its policy is the %s committed on its HEAD branch; run `git apex init` in a worktree of that branch and commit the file",
			policy.FileName, top, policy.FileName)
	} else if git.Bare {
		top = git.Toplevel // to be committed, on HEAD's branch, to apply
	}
	path := filepath.Join(top, policy.FileName)
	return path, policy.WriteTemplate(path, force)
}

// InitReport is what `git apex init --json` prints.
type InitReport struct {
	Path    string         `json:"path"`    // the policy file written
	Runtime string         `json:"runtime"` // whether a container runtime answers
	Hooks   []hooks.Status `json:"hooks"`   // the git hooks, after init
}
