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

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// Container labels: how git-apex finds its own containers, and which
// layout of mounts a container has.
const (
	labelEnv    = "git-apex.env"
	labelRepo   = "git-apex.repo"
	labelLayout = "git-apex.layout"
)

// layout is the mount layout containers are made with now: a private git
// directory (a sandbox) and the host's objects read-only. A container
// with another (one made by an earlier git-apex, which mounted the
// repository's git directory) is made again before it is used.
const layout = "2"

// defaultPids is the pids limit of every container.
const defaultPids = 4096

// keptCaps are the capabilities a container keeps, of Docker's default
// set: what a shell, a package manager and a build need (owning and
// reading files, switching users, signalling its own processes, binding
// low ports). Raw sockets, device nodes, chroot, file capabilities and
// the rest are dropped.
var keptCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"}

// runtimeAnswer is how long git-apex waits for the engine to answer
// before counting it unreachable.
const runtimeAnswer = 3 * time.Second

// runtime returns the container runtime, or why there is none.
func (m *Manager) runtime(ctx context.Context) (container.Runtime, error) {
	if m.rt == nil && m.rtErr == nil {
		rt, err := container.NewDockerRuntime()
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

// containerUser is the user a container runs as: the policy's, or the
// invoking uid:gid for "host".
func containerUser(pol *policy.Policy) string {
	if pol.Container.User == "host" {
		return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	}
	return pol.Container.User
}

// containerSpec is the container of a full env, working in the sandbox s:
// the worktree at its own path, with the sandbox's gitfile read-only over
// its .git file, the sandbox's private git directory, and the host's
// object directories read-only, so that git works inside while nothing
// run there can write what the host's git reads (its config, hooks,
// refs, other worktrees) or git-apex's state. It keeps only keptCaps.
func (m *Manager) containerSpec(s *sandbox, identity string, pol *policy.Policy, trusted bool) container.ContainerSpec {
	c := pol.Container
	spec := container.ContainerSpec{
		Name:   s.name,
		Image:  c.Image,
		Labels: map[string]string{labelEnv: identity, labelRepo: realPath(m.Git.CommonDir), labelLayout: layout},
		Binds: []container.Bind{
			{Source: s.worktree, Target: s.worktree},
			{Source: s.gitfile(), Target: filepath.Join(s.worktree, ".git"), ReadOnly: true},
			{Source: s.gitDir(), Target: sandboxGitDir},
		},
		WorkDir: s.worktree,
		User:    containerUser(pol),
		CPUs:    c.CPUs,
		Memory:  int64(c.Memory),
		Pids:    defaultPids,
		Network: c.Network,
		Caps:    keptCaps,
		Env:     []string{"HOME=/tmp"},
		Cmd:     []string{"sleep", "2147483647"},
	}
	for _, dir := range m.objectDirs() {
		spec.Binds = append(spec.Binds, container.Bind{Source: dir, Target: dir, ReadOnly: true})
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

// makeContainer creates and starts the container working in the sandbox
// s (which must exist) and returns its id; on failure it removes what it
// made.
func (m *Manager) makeContainer(ctx context.Context, s *sandbox, identity string, pol *policy.Policy) (string, error) {
	rt, err := m.runtime(ctx)
	if err != nil {
		return "", err
	}
	trusted, _, err := m.trustedSettings(pol)
	if err != nil {
		return "", err
	}
	id, err := rt.Create(ctx, m.containerSpec(s, identity, pol, trusted))
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
	identity := p.id.String()
	s := c.m.sandboxFor(identity, p.path, p.branch)
	undoSandbox := func(context.Context) error { return os.RemoveAll(s.dir) }
	if err := c.m.makeSandbox(ctx, s, p.start, containerUser(p.policy)); err != nil {
		return undoAll(undoTree, undoSandbox), errContainer{fmt.Errorf("cannot make its private git directory: %w", err)}
	}
	id, err := c.m.makeContainer(ctx, s, identity, p.policy)
	if err != nil {
		return undoAll(undoTree, undoSandbox), errContainer{err}
	}
	p.container = id
	rt := c.m.rt
	return undoAll(undoTree, undoSandbox, func(ctx context.Context) error { return rt.Remove(ctx, id) }), nil
}

// remove deletes the worktree, then the container and the sandbox. The
// caller has brought the container's commits back first (bringBackEnv).
func (c containerProvider) remove(ctx context.Context, lk *gitx.Locked, env *state.Env, force bool) error {
	if err := (worktreeProvider{}).remove(ctx, lk, env, force); err != nil {
		return err
	}
	sandboxDir := c.m.envSandbox(env).dir
	if env.Container == "" {
		return os.RemoveAll(sandboxDir)
	}
	rt, err := c.m.runtime(ctx)
	if err != nil {
		c.m.warnf("%s: its container %s was left: %v; remove it with `docker rm -f %s`", env.Identity, short(env.Container), err, short(env.Container))
		return os.RemoveAll(sandboxDir)
	}
	return errors.Join(rt.Remove(ctx, env.Container), os.RemoveAll(sandboxDir))
}

// envSandbox is a full env's sandbox.
func (m *Manager) envSandbox(env *state.Env) *sandbox {
	return m.sandboxFor(env.Identity, env.Path, env.Branch)
}

// contained reports whether a container writes in the env's worktree.
func contained(env *state.Env) bool { return env.Mode == string(policy.Full) }

// runningContainer returns the runtime with the container id running,
// starting it if it stopped.
func (m *Manager) runningContainer(ctx context.Context, id string) (container.Runtime, error) {
	rt, err := m.runtime(ctx)
	if err != nil {
		return nil, err
	}
	info, err := rt.Inspect(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case info.State == "missing":
		return nil, fmt.Errorf("its container %s is gone", short(id))
	case info.State != "running":
		if err := rt.Start(ctx, id); err != nil {
			return nil, err
		}
	}
	return rt, nil
}

// bringBackEnv brings the commits a full env's container made to the
// host (see bringBack) and records what moved. An env whose sandbox's
// tip did not move costs one file read, and needs no runtime.
func (m *Manager) bringBackEnv(ctx context.Context, lk *gitx.Locked, env *state.Env) (broughtBack, error) {
	s := m.envSandbox(env)
	if !contained(env) || !env.Live() || env.Container == "" || !s.exists() {
		return broughtBack{}, nil
	}
	if s.unchanged() {
		return broughtBack{}, nil
	}
	if problem := m.Git.GitfileProblem(env.Path); problem != "" {
		return broughtBack{}, gitfileRefusal(env, problem)
	}
	b, err := m.bringBack(ctx, lk, env.Container, s)
	if err != nil {
		return b, err
	}
	m.sandboxReport(env.Identity, env.Branch, b)
	switch {
	case b.Kept != "":
		err = m.Store.Record(ctx, env, "kept", b.Why+" as "+b.Kept)
	case b.To != "":
		err = m.Store.Record(ctx, env, "synced", fmt.Sprintf("%s..%s from the container", short(b.From), short(b.To)))
	}
	return b, err
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

// SlotContainer makes a container for a batch task in a leased slot, as a
// full env's (with a sandbox at the slot's commit), and returns its id.
// It fails when no runtime answers or the policy names no image. The
// slot is marked contained: its release then trusts nothing in it.
func (m *Manager) SlotContainer(ctx context.Context, l *Lease, id policy.Identity) (string, error) {
	pol, err := m.Policy()
	if err != nil {
		return "", err
	}
	if reason := m.prepareFull(ctx, pol); reason != "" {
		return "", exitcode.New(exitcode.Runtime, "cannot run %s in a container: %s", id, reason)
	}
	s := m.sandboxFor(id.String(), l.Path(), "")
	l.contained = true
	if err := m.makeSandbox(ctx, s, l.commit, containerUser(pol)); err != nil {
		return "", err
	}
	cid, err := m.makeContainer(ctx, s, id.String(), pol)
	if err != nil {
		os.RemoveAll(s.dir)
	}
	return cid, err
}

// DropSlotContainer removes a batch task's container and its sandbox.
// With keep (a failed task's slot kept as an env), the commits the task
// made come back to the slot's HEAD first.
func (m *Manager) DropSlotContainer(ctx context.Context, l *Lease, ctr string, id policy.Identity, keep bool) error {
	s := m.sandboxFor(id.String(), l.Path(), "")
	rt, err := m.runtime(ctx)
	if err != nil {
		return err
	}
	if keep {
		b, err := m.bringBack(ctx, nil, ctr, s)
		if err != nil {
			m.warnf("%s: %v", id, err)
		}
		m.sandboxReport(id.String(), "", b)
	}
	return errors.Join(rt.Remove(ctx, ctr), os.RemoveAll(s.dir))
}

// ExecContainer runs a command in a container and returns its exit code.
func (m *Manager) ExecContainer(ctx context.Context, id string, spec container.ExecSpec) (int, error) {
	return m.rt.Exec(ctx, id, spec)
}
