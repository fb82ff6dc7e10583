package isolation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
)

// RuntimeReport says whether a container runtime answers, for init.
func RuntimeReport(ctx context.Context) string {
	rt, err := container.NewDockerRuntime()
	if err == nil {
		defer rt.Close()
		pctx, cancel := context.WithTimeout(ctx, runtimeAnswer)
		defer cancel()
		var version string
		if version, err = rt.Version(pctx); err == nil {
			return "container runtime: Docker Engine " + version + " answers: full isolation is available"
		}
	}
	return fmt.Sprintf("container runtime: none answers (%v): full isolation would fall back to worktrees", err)
}

// InitPolicy writes policy.Template as .apex.toml at the top of the main
// checkout of the repository containing dir, and returns its path. It
// refuses (exit 3) to overwrite an existing file unless force is set.
// Unlike the other commands it works in a repository with no commits.
func InitPolicy(ctx context.Context, dir string, force bool) (string, error) {
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(repo.MainRoot(), policy.FileName)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if os.IsExist(err) {
		return "", exitcode.New(exitcode.Refused, "%s already exists; edit it, or run `git apex init --force` to replace it with the template", path)
	}
	if err != nil {
		return "", fmt.Errorf("cannot write %s: %w", path, err)
	}
	if _, err := f.WriteString(policy.Template); err != nil {
		f.Close()
		return "", fmt.Errorf("cannot write %s: %w", path, err)
	}
	return path, f.Close()
}
