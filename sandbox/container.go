package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/ports"
	"github.com/git-apex/git-apex/repo"
)

// Container labels: how git-apex finds its own containers, which layout
// of mounts a container has, and which worktree it works in (how the
// pool finds the containers a dead holder left over a slot).
const (
	LabelEnv      = "git-apex.env"
	LabelRepo     = "git-apex.repo"
	LabelLayout   = "git-apex.layout"
	LabelWorktree = "git-apex.worktree"
)

// Layout is the mount layout containers are made with now: a private git
// directory (a sandbox) and the host's objects read-only. A container
// with another (one made by an earlier git-apex, which mounted the
// repository's git directory) is made again before it is used.
const Layout = "2"

// defaultPids is the pids limit of every container.
const defaultPids = 4096

// Ready decides, before the repository lock, whether a full env can have
// its container: a runtime that answers and the image, pulled if
// missing. It returns why not, or "".
func Ready(ctx context.Context, r *repo.Repo, pol *policy.Policy) string {
	if pol.Container.Image == "" {
		return "the policy names no [container].image"
	}
	rt, err := r.Runtime(ctx)
	if err != nil {
		return err.Error()
	}
	if err := rt.EnsureImage(ctx, pol.Container.Image, r.Stderr()); err != nil {
		return fmt.Sprintf("cannot get image %s: %v", pol.Container.Image, err)
	}
	return ""
}

// ContainerName names an env's container: unique per repository and
// identity, in the characters Docker allows.
func ContainerName(r *repo.Repo, identity string) string {
	sum := sha256.Sum256([]byte(r.Key()))
	return "git-apex-" + hex.EncodeToString(sum[:4]) + "-" + identity
}

// user is the user the sandbox's container runs as: the policy's once
// `git apex trust` approved it (another user, root above all, is a
// privilege), else the host's (repo.HostUser), or 0:0 on a rootless
// engine (container.Endpoint.Rootless), whose containers' root is the
// user running the engine, so that what the container writes in the
// mounted worktree is that user's, not a subordinate id's. handover is
// set when git-apex runs as root and the host's user is another: the
// worktree is then given to that user, as its sandbox is.
func (s *Sandbox) user(ctx context.Context, pol *policy.Policy) (user string, handover bool, err error) {
	if pol.Container.User != "host" {
		trusted, _, err := s.r.Trusted(pol)
		if err != nil || trusted {
			return pol.Container.User, false, err
		}
	}
	e, err := s.on(ctx)
	if err != nil {
		return "", false, err
	}
	if e.Endpoint.Rootless() {
		return "0:0", false, nil
	}
	uid, gid := s.r.HostUser()
	return fmt.Sprintf("%d:%d", uid, gid), os.Getuid() == 0 && uid != 0, nil
}

// spec is the container working in the sandbox: the worktree at its own
// path, with the sandbox's gitfile read-only over its .git file, the
// sandbox's private git directory, and the host's object directories
// read-only, so that git works inside while nothing run there can write
// what the host's git reads (its config, hooks, refs, other worktrees)
// or git-apex's state. In copy mode it mounts none of these: they are
// copied in (copymode.Worktree.CopyIn). It keeps only container.CapsFor(user).
func (s *Sandbox) spec(pol *policy.Policy, trusted bool, user string) container.ContainerSpec {
	copied := s.Copied()
	c := pol.Container
	spec := container.ContainerSpec{
		Name:   s.name,
		Image:  c.Image,
		Labels: map[string]string{LabelEnv: s.identity, LabelRepo: s.r.Key(), LabelLayout: Layout, LabelWorktree: s.worktree},
		Binds: []container.Bind{
			{Source: s.worktree, Target: s.worktree},
			{Source: s.gitfile(), Target: filepath.Join(s.worktree, ".git"), ReadOnly: true},
			{Source: s.gitDir(), Target: gitDirInside},
		},
		WorkDir: s.worktree,
		User:    user,
		CPUs:    c.CPUs,
		Memory:  int64(c.Memory),
		Pids:    defaultPids,
		Network: c.Network,
		Caps:    container.CapsFor(user),
		Env:     []string{"HOME=/tmp"},
		Cmd:     []string{"sleep", "2147483647"},
	}
	if c.Network == "bridge" && s.port > 0 {
		for p := s.port; p < s.port+ports.Block; p++ {
			spec.Ports = append(spec.Ports, p)
		}
	}
	if copied {
		spec.Binds = nil
	} else {
		for _, dir := range objectDirs(s.r) {
			spec.Binds = append(spec.Binds, container.Bind{Source: dir, Target: dir, ReadOnly: true})
		}
	}
	for path := range s.gitlinks() {
		spec.Hidden = append(spec.Hidden, filepath.Join(s.worktree, filepath.FromSlash(path)))
	}
	sort.Strings(spec.Hidden)
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
			spec.Binds = append(spec.Binds, container.Bind{Source: host, Target: target})
		}
	}
	return spec
}

// MakeContainer creates and starts the container working in the sandbox
// (which must exist), copying its files in first in copy mode, and
// returns its id; on failure it removes what it made.
func (s *Sandbox) MakeContainer(ctx context.Context, pol *policy.Policy) (string, error) {
	eng, err := s.on(ctx)
	if err != nil {
		return "", err
	}
	rt := eng.Runtime
	trusted, _, err := s.r.Trusted(pol)
	if err != nil {
		return "", err
	}
	user, handover, err := s.user(ctx, pol)
	if err != nil {
		return "", err
	}
	if handover && !s.Copied() {
		if err := chownTree(s.worktree, user); err != nil {
			return "", fmt.Errorf("cannot give the worktree to %s: %w", user, err)
		}
	}
	id, err := rt.Create(ctx, s.spec(pol, trusted, user))
	if err == nil && s.Copied() {
		err = s.copied().CopyIn(ctx, rt, id, user, s.gitDir(), gitDirInside)
	}
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

// running returns the runtime with the sandbox's container id running,
// starting it if it stopped.
func (s *Sandbox) running(ctx context.Context, id string) (container.Runtime, error) {
	eng, err := s.on(ctx)
	if err != nil {
		return nil, err
	}
	rt := eng.Runtime
	info, err := rt.Inspect(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case info.State == "missing":
		return nil, fmt.Errorf("its container %s is gone", repo.Short(id))
	case info.State != "running":
		if err := rt.Start(ctx, id); err != nil {
			return nil, err
		}
	}
	return rt, nil
}
