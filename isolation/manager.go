// Package isolation makes, finds, heals and removes environments. It
// holds the providers, one per mode (full: a worktree, a container and a
// private git directory; worktree; shared), the lifecycles that drive
// them from the state store, the policy and git, the warm pool, merged
// sweeps and gc, doctor's checks and crash recovery. It runs git only
// through gitx, speaks SQL only through state, and reaches containers
// only through the container package's Runtime.
package isolation

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trust"
)

// Options configure a Manager.
type Options struct {
	// PolicyFile overrides the main checkout's .apex.toml when not "".
	PolicyFile string
	// Stderr receives warnings and notes; nil discards them.
	Stderr io.Writer
	// StateWait is how long a write to the state database waits for
	// another process's; 0: state.DefaultWait.
	StateWait time.Duration
}

// Manager is an opened repository with its state and policy.
type Manager struct {
	Git   *gitx.Repo
	Store *state.Store
	opts  Options
	trust *trust.Store // opened on first use

	policy    *policy.Policy // loaded on first use
	policyErr error

	rt    container.Runtime // the container runtime, connected on first use
	rtErr error             // why there is none
}

// trustStore opens the user's approvals.
func (m *Manager) trustStore() (*trust.Store, error) {
	if m.trust == nil {
		store, err := trust.Open()
		if err != nil {
			return nil, err
		}
		m.trust = store
	}
	return m.trust, nil
}

// Open opens the repository containing dir and its state database. The
// repository must have a working tree and at least one commit.
func Open(ctx context.Context, dir string, opts Options) (*Manager, error) {
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := repo.RequireCommits(); err != nil {
		return nil, err
	}
	return newManager(ctx, repo, opts)
}

// newManager opens a repository's state database.
func newManager(ctx context.Context, repo *gitx.Repo, opts Options) (*Manager, error) {
	store, err := state.Open(ctx, filepath.Join(repo.ApexDir(), "state.db"), opts.StateWait)
	if err != nil {
		return nil, err
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	return &Manager{Git: repo, Store: store, opts: opts}, nil
}

// Close closes the state database and the runtime connection.
func (m *Manager) Close() error {
	if m.rt != nil {
		m.rt.Close()
	}
	return m.Store.Close()
}

// Policy loads the policy, once: the override file when one was given,
// else the main checkout's working-tree .apex.toml (uncommitted edits
// included), else the built-in defaults.
func (m *Manager) Policy() (*policy.Policy, error) {
	if m.policy == nil && m.policyErr == nil {
		if m.opts.PolicyFile != "" {
			m.policy, m.policyErr = policy.Load(m.opts.PolicyFile, true)
		} else {
			m.policy, m.policyErr = policy.Load(filepath.Join(m.Git.MainRoot(), policy.FileName), false)
		}
	}
	return m.policy, m.policyErr
}

// warnf prints a warning on stderr.
func (m *Manager) warnf(format string, args ...any) {
	fmt.Fprintf(m.opts.Stderr, "warning: "+format+"\n", args...)
}

// notef prints a note on stderr.
func (m *Manager) notef(format string, args ...any) {
	fmt.Fprintf(m.opts.Stderr, format+"\n", args...)
}

// resolve returns the live env an identity names, its own or through a
// link (then link is set), or a not-found error (exit 7).
func (m *Manager) resolve(ctx context.Context, identity string) (*state.Env, *state.Link, error) {
	if _, err := policy.ParseIdentity(identity); err != nil {
		return nil, nil, err
	}
	env, link, err := m.Store.Resolve(ctx, identity)
	if err != nil {
		return nil, nil, err
	}
	if env == nil {
		return nil, nil, exitcode.New(exitcode.NotFound, "no environment for %s: `git apex list` shows them, `git apex start %s` makes one", identity, identity)
	}
	return env, link, nil
}

// lock takes the repository lock, under which everything that changes the
// repository runs, once the state database can take the record of it: a
// database from a newer git-apex, or a read-only one, stops the change
// before anything on disk moves.
func (m *Manager) lock(ctx context.Context) (*gitx.Locked, error) {
	if err := m.Store.CheckWritable(); err != nil {
		return nil, err
	}
	return m.Git.Lock(ctx)
}

// lockedEnv takes the repository lock and resolves identity under it.
// The caller unlocks lk when err is nil.
func (m *Manager) lockedEnv(ctx context.Context, identity string) (*gitx.Locked, *state.Env, *state.Link, error) {
	if _, err := policy.ParseIdentity(identity); err != nil {
		return nil, nil, nil, err
	}
	lk, err := m.lock(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	env, link, err := m.resolve(ctx, identity)
	if err != nil {
		lk.Unlock()
		return nil, nil, nil, err
	}
	return lk, env, link, nil
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// within reports whether path is dir or below it, comparing real paths.
func within(path, dir string) bool {
	path, dir = realPath(path), realPath(dir)
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func realPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return filepath.Clean(path)
}

// OpenBare opens a bare repository (a cached clone the batch runner
// made) with its own state, for its pool.
func OpenBare(ctx context.Context, dir string, opts Options) (*Manager, error) {
	repo, err := gitx.OpenBare(ctx, dir)
	if err != nil {
		return nil, err
	}
	return newManager(ctx, repo, opts)
}

// BaseCommit resolves a task's base: a commit-ish, or "" for the pool's
// commit (the default base's tip).
func (m *Manager) BaseCommit(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		return m.poolCommit(ctx)
	}
	return m.Git.Commit(ctx, rev)
}

// MainRoot is the main checkout.
func (m *Manager) MainRoot() string { return m.Git.MainRoot() }
