package isolation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// Container labels: how git-apex finds its own containers.
const (
	labelEnv  = "git-apex.env"
	labelRepo = "git-apex.repo"
)

// defaultPids is the pids limit of every container.
const defaultPids = 4096

// runtimeAnswer is how long git-apex waits for the engine to answer
// before counting it unreachable.
const runtimeAnswer = 3 * time.Second

// runtime returns the container runtime, or why there is none.
func (m *Manager) runtime(ctx context.Context) (Runtime, error) {
	if m.rt == nil && m.rtErr == nil {
		rt, err := NewDockerRuntime()
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, runtimeAnswer)
			_, err = rt.Version(pctx)
			cancel()
			if err != nil {
				rt.Close()
			}
		}
		if err != nil {
			m.rtErr = fmt.Errorf("no container runtime answers (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
		} else {
			m.rt = rt
		}
	}
	return m.rt, m.rtErr
}

// RuntimeVersion is the container engine's version, or why it has none.
func (m *Manager) RuntimeVersion(ctx context.Context) (string, error) {
	rt, err := m.runtime(ctx)
	if err != nil {
		return "", err
	}
	return rt.Version(ctx)
}

// prepareFull decides, before the repository lock, whether a full start
// can have its container: a runtime that answers and the image, pulled if
// missing. It returns why not, or "".
func (m *Manager) prepareFull(ctx context.Context, pol *policy.Policy) string {
	if pol.Container.Image == "" {
		return "the policy names no [container].image"
	}
	rt, err := m.runtime(ctx)
	if err != nil {
		return err.Error()
	}
	if err := rt.EnsureImage(ctx, pol.Container.Image, m.opts.Stderr); err != nil {
		return fmt.Sprintf("cannot get image %s: %v", pol.Container.Image, err)
	}
	return ""
}

// containerName names an env's container: unique per repository and
// identity, in the characters Docker allows.
func (m *Manager) containerName(identity string) string {
	sum := sha256.Sum256([]byte(realPath(m.Git.CommonDir)))
	return "git-apex-" + hex.EncodeToString(sum[:4]) + "-" + identity
}

// containerSpec is the container of a full env: the worktree and the
// repository's git directory mounted at their own paths so git works
// inside, with hooks/ and config read-only and git-apex's apex/ hidden, so
// nothing run inside can plant code the host runs later or touch
// git-apex's state.
func (m *Manager) containerSpec(env *state.Env, pol *policy.Policy, trusted bool) (ContainerSpec, error) {
	common := realPath(m.Git.CommonDir)
	hooks := filepath.Join(common, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return ContainerSpec{}, err
	}
	c := pol.Container
	spec := ContainerSpec{
		Name:   m.containerName(env.Identity),
		Image:  c.Image,
		Labels: map[string]string{labelEnv: env.Identity, labelRepo: common},
		Binds: []Bind{
			{Source: env.Path, Target: env.Path},
			{Source: common, Target: common},
			{Source: hooks, Target: hooks, ReadOnly: true},
			{Source: filepath.Join(common, "config"), Target: filepath.Join(common, "config"), ReadOnly: true},
		},
		Hidden:  []string{filepath.Join(common, "apex")},
		WorkDir: env.Path,
		User:    c.User,
		CPUs:    c.CPUs,
		Memory:  int64(c.Memory),
		Pids:    defaultPids,
		Network: c.Network,
		Env:     []string{"HOME=/tmp"},
		Cmd:     []string{"sleep", "2147483647"},
	}
	if spec.User == "host" {
		spec.User = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	}
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		spec.Env = append(spec.Env, k+"="+c.Env[k])
	}
	if trusted {
		for host, target := range c.Volumes {
			spec.Binds = append(spec.Binds, Bind{Source: host, Target: target})
		}
	}
	return spec, nil
}

// makeContainer creates and starts an env's container and returns its id;
// on failure it removes what it made.
func (m *Manager) makeContainer(ctx context.Context, env *state.Env, pol *policy.Policy) (string, error) {
	rt, err := m.runtime(ctx)
	if err != nil {
		return "", err
	}
	trusted, _, err := m.trustedSettings(pol)
	if err != nil {
		return "", err
	}
	spec, err := m.containerSpec(env, pol, trusted)
	if err != nil {
		return "", err
	}
	id, err := rt.Create(ctx, spec)
	if err == nil {
		err = rt.Start(ctx, id)
	}
	if err != nil {
		if id != "" {
			rt.Remove(context.WithoutCancel(ctx), id)
		}
		return "", err
	}
	return id, nil
}

// containerProvider gives each env a worktree and a container with it
// mounted.
type containerProvider struct {
	m *Manager
}

// errContainer marks a failure to make the container (not the worktree):
// create falls back to the worktree alone unless strict.
type errContainer struct{ err error }

func (e errContainer) Error() string { return e.err.Error() }
func (e errContainer) Unwrap() error { return e.err }

func (c containerProvider) create(ctx context.Context, lk *gitx.Locked, p *plan) (func(context.Context) error, error) {
	undoTree, err := worktreeProvider{}.create(ctx, lk, p)
	if err != nil {
		return undoTree, err
	}
	env := &state.Env{Identity: p.id.String(), Path: p.path}
	id, err := c.m.makeContainer(ctx, env, p.policy)
	if err != nil {
		return undoTree, errContainer{err}
	}
	p.container = id
	rt := c.m.rt
	return undoAll(undoTree, func(ctx context.Context) error { return rt.Remove(ctx, id) }), nil
}

func (c containerProvider) remove(ctx context.Context, lk *gitx.Locked, env *state.Env, force bool) error {
	if err := (worktreeProvider{}).remove(ctx, lk, env, force); err != nil {
		return err
	}
	if env.Container == "" {
		return nil
	}
	rt, err := c.m.runtime(ctx)
	if err != nil {
		c.m.warnf("%s: its container %s was left: %v; remove it with `docker rm -f %s`", env.Identity, short(env.Container), err, short(env.Container))
		return nil
	}
	return rt.Remove(ctx, env.Container)
}

// strictFull is the error of a strict full start that cannot have its
// container.
func strictFull(id policy.Identity, reason string) error {
	return exitcode.New(exitcode.Runtime, "cannot start %s in full isolation: %s; strict mode forbids falling back", id, reason)
}

// isContainerError reports whether err is a failure of the container part.
func isContainerError(err error) bool {
	var ce errContainer
	return errors.As(err, &ce)
}

// SlotContainer makes a container for a batch task's slot at path, as a
// full env's, and returns its id. It fails when no runtime answers or
// the policy names no image.
func (m *Manager) SlotContainer(ctx context.Context, path string, id policy.Identity) (string, error) {
	pol, err := m.Policy()
	if err != nil {
		return "", err
	}
	if reason := m.prepareFull(ctx, pol); reason != "" {
		return "", exitcode.New(exitcode.Runtime, "cannot run %s in a container: %s", id, reason)
	}
	return m.makeContainer(ctx, &state.Env{Identity: id.String(), Path: path}, pol)
}

// ExecContainer runs a command in a container and returns its exit code.
func (m *Manager) ExecContainer(ctx context.Context, id string, spec ExecSpec) (int, error) {
	return m.rt.Exec(ctx, id, spec)
}

// RemoveContainer removes a container.
func (m *Manager) RemoveContainer(ctx context.Context, id string) error {
	rt, err := m.runtime(ctx)
	if err != nil {
		return err
	}
	return rt.Remove(ctx, id)
}
