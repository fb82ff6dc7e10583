package shell

import (
	"context"
	"os"
	"slices"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
)

// RepoSource is the Source of the repository that holds dir: the live
// envs' identities and the links' aliases from its state, the built-in
// workflows and the policy's, and its local branches. It never makes a state database, and
// outside a repository it offers nothing.
func RepoSource(dir string, opts repo.Options) Source {
	return &repoSource{dir: dir, opts: opts}
}

type repoSource struct {
	dir  string
	opts repo.Options
}

func (s *repoSource) Identities(ctx context.Context) []string {
	var out []string
	s.with(ctx, func(r *repo.Repo) {
		envs, _ := r.Store.Envs(ctx, false)
		for _, e := range envs {
			out = append(out, e.Identity)
		}
		links, _ := r.Store.Links(ctx)
		for _, list := range links {
			for _, l := range list {
				out = append(out, l.Alias)
			}
		}
	})
	return out
}

func (s *repoSource) Workflows(ctx context.Context) []string {
	out := slices.Clone(policy.Builtins)
	s.with(ctx, func(r *repo.Repo) {
		if pol, err := r.Policy(); err == nil {
			for name := range pol.Workflow {
				out = append(out, name)
			}
		}
	})
	return out
}

func (s *repoSource) Branches(ctx context.Context) []string {
	git, err := gitx.Open(ctx, s.dir)
	if err != nil {
		return nil
	}
	branches, _ := git.Branches(ctx, false)
	var out []string
	for name := range branches {
		out = append(out, name)
	}
	return out
}

// with runs fn with the repository when it has a state database.
func (s *repoSource) with(ctx context.Context, fn func(*repo.Repo)) {
	git, err := gitx.Open(ctx, s.dir)
	if err != nil {
		return
	}
	if _, err := os.Stat(repo.StatePath(git)); err != nil {
		return
	}
	r, err := repo.OpenState(ctx, git, s.opts)
	if err != nil {
		return
	}
	defer r.Close()
	fn(r)
}
