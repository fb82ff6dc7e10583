// Package repo is an opened repository: its git, its state database, its
// policy, the user's approvals of that policy, and the container runtime,
// each opened on first use; the repository lock; and where notes and
// warnings go. Every domain package above it (heal, setup, sandbox, pool,
// isolation, sweep, doctor, batch) works on a *Repo and opens no
// connection of its own. It makes and removes nothing itself.
package repo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trust"
)

// Options configure an opened repository.
type Options struct {
	// PolicyFile overrides the main checkout's .apex.toml when not "".
	PolicyFile string
	// Stderr receives warnings and notes; nil discards them.
	Stderr io.Writer
	// StateWait is how long a write to the state database waits for
	// another process's; 0: state.DefaultWait.
	StateWait time.Duration
	// Clock stamps the state's records; nil: time.Now.
	Clock func() time.Time
}

// Repo is an opened repository with its state and policy.
type Repo struct {
	Git   *gitx.Repo
	Store *state.Store
	opts  Options
	trust *trust.Store // opened on first use

	policy    *policy.Policy // loaded on first use
	policyErr error

	personal *Personal // the user's git config apex.*, read on first use

	rt     container.Runtime  // the container runtime, connected on first use
	engine container.Endpoint // where rt reached it
	rtErr  error              // why there is none

	warnMu sync.Mutex
	warned []string // the warnings printed, for Warnings

	engines   map[string]*reached // each engine reached, by its record (see Engine)
	enginesMu sync.Mutex
}

// Open opens the repository containing dir and its state database: a
// working tree's, or a bare repository's (from one of its worktrees or
// its own directory). The repository must have at least one commit.
func Open(ctx context.Context, dir string, opts Options) (*Repo, error) {
	git, err := gitx.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := git.RequireCommits(); err != nil {
		return nil, err
	}
	return OpenState(ctx, git, opts)
}

// CloneDir is where the batch runner keeps r's cached bare clone of url
// (a task's `repo =`), each with its own state and pool.
func CloneDir(r *Repo, url string) string {
	return ClonePath(filepath.Join(r.Git.ApexDir(), "repos"), url, true)
}

// ClonePath is where a clone of url is kept under parent: a directory
// named by a hash of the URL, ending in .git when the clone is bare.
func ClonePath(parent, url string, bare bool) string {
	sum := sha256.Sum256([]byte(url))
	name := hex.EncodeToString(sum[:8])
	if bare {
		name += ".git"
	}
	return filepath.Join(parent, name)
}

// Clone is one of a repository's cached clones (CloneDir): opened, or
// Err says why it could not be.
type Clone struct {
	Dir  string
	Repo *Repo
	Err  error
}

// OpenClones opens r's cached clones (CloneDir) that have a state
// database, their warnings and notes going where r's go, each on its
// own: one that cannot be opened comes with why, and the others are
// opened all the same. A clone without a state database has no pool to
// open (a clone of an empty repository: its tasks failed before any
// slot was made); one whose HEAD is unborn is opened all the same. The
// caller closes those opened.
func OpenClones(ctx context.Context, r *Repo) ([]Clone, error) {
	dirs, err := filepath.Glob(filepath.Join(r.Git.ApexDir(), "repos", "*.git"))
	if err != nil {
		return nil, err
	}
	var clones []Clone
	for _, dir := range dirs {
		git, err := gitx.Open(ctx, dir)
		if err == nil && !hostpath.Exists(StatePath(git)) {
			continue
		}
		c := Clone{Dir: dir, Err: err}
		if err == nil {
			c.Repo, c.Err = OpenState(ctx, git, Options{Stderr: r.opts.Stderr, StateWait: r.opts.StateWait, Clock: r.opts.Clock})
		}
		clones = append(clones, c)
	}
	return clones, nil
}

// OpenState opens the state database of a repository git has opened.
func OpenState(ctx context.Context, git *gitx.Repo, opts Options) (*Repo, error) {
	store, err := state.Open(ctx, StatePath(git), state.Options{Wait: opts.StateWait, Clock: opts.Clock})
	if err != nil {
		return nil, err
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	return &Repo{Git: git, Store: store, opts: opts}, nil
}

// StatePath is where a repository's state database is.
func StatePath(git *gitx.Repo) string { return filepath.Join(git.ApexDir(), "state.db") }

// Close closes the state database and the runtime connection.
func (r *Repo) Close() error {
	for _, e := range r.engines {
		if e.rt != nil {
			e.rt.Close()
		}
	}
	return r.Store.Close()
}

// Policy loads the policy, once: the override file when one was given,
// else the main checkout's working-tree .apex.toml (uncommitted edits
// included), or in a bare repository the one committed on its HEAD, else
// the built-in defaults. An .apex.toml that is a
// symbolic link leading out of the checkout's files (or into its git
// directory) is refused unread: its parse errors would show the user's
// secret file, in a log an agent reads, say.
func (r *Repo) Policy() (*policy.Policy, error) {
	if r.policy == nil && r.policyErr == nil {
		if r.opts.PolicyFile != "" {
			r.policy, r.policyErr = policy.Load(r.opts.PolicyFile, true)
		} else if r.Git.Bare {
			r.policy, r.policyErr = committedPolicy(r.Git)
			if r.policyErr == nil && r.policy.Bounds() != nil {
				r.keepBounds(r.policy)
			}
		} else {
			file := filepath.Join(r.Git.MainRoot(), policy.FileName)
			if real := r.linkedAway(file); real != "" {
				r.policyErr = &policy.Error{File: file, Msg: "it is a symbolic link to " + real + ", outside the main checkout's files, and is not read: a policy is read only from the checkout; replace the link with the file"}
			} else {
				r.policy, r.policyErr = policy.Load(file, false)
			}
			if r.policyErr == nil && r.policy.Bounds() != nil {
				r.keepBounds(r.policy)
			}
		}
	}
	return r.policy, r.policyErr
}

// committedPolicy is a bare repository's policy: the .apex.toml of its
// HEAD's commit, there being no checkout to read one from; the built-in
// defaults when that commit has none.
func committedPolicy(git *gitx.Repo) (*policy.Policy, error) {
	spec := "HEAD:" + policy.FileName
	label := git.MainRoot() + " (" + spec + ")"
	text, found, err := gitx.Committed(context.Background(), git.CommonDir, spec, policy.MaxSize)
	if err != nil {
		return nil, &policy.Error{File: label, Msg: "cannot read it: " + err.Error()}
	}
	if !found {
		return policy.Default(), nil
	}
	pol, err := policy.Decode(label, text)
	if err != nil {
		return nil, err
	}
	pol.File = label
	return pol, nil
}

// keepBounds puts the bounds a committed policy lifts back to their
// defaults, with a warning, until `git apex trust` approves them (the
// trust store is read only for such a policy).
func (r *Repo) keepBounds(pol *policy.Policy) {
	if ok, _, err := r.Trusted(pol); err == nil && ok {
		return
	}
	lifted := pol.Bounds()
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(lifted)) {
		lines = append(lines, k+" = "+lifted[k])
	}
	pol.KeepBounds()
	r.Warnf("using the default bounds, not the policy's %s, until you approve them with `git apex trust`", strings.Join(lines, ", "))
}

// linkedAway returns where file really leads when it is a symbolic link
// that leads out of the main checkout or into the git directory, else "".
// A file that is no link costs one lstat.
func (r *Repo) linkedAway(file string) string {
	if info, err := os.Lstat(file); err != nil || info.Mode()&os.ModeSymlink == 0 {
		return ""
	}
	real := hostpath.RealPath(file)
	if hostpath.Within(real, r.Git.MainRoot()) && !hostpath.Within(real, r.Git.CommonDir) {
		return ""
	}
	return real
}

// PolicyFile is the policy file given in place of .apex.toml, or "".
func (r *Repo) PolicyFile() string { return r.opts.PolicyFile }

// Stderr is where notes and warnings go, and commands' output with them.
func (r *Repo) Stderr() io.Writer { return r.opts.Stderr }

// Warnf prints a warning on stderr, and keeps it for Warnings.
func (r *Repo) Warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.warnMu.Lock()
	defer r.warnMu.Unlock()
	r.warned = append(r.warned, msg)
	fmt.Fprintf(r.opts.Stderr, "warning: %s\n", msg)
}

// Warnings are the warnings printed since the repository was opened: the
// servers open one per request and answer them with its result.
func (r *Repo) Warnings() []string {
	r.warnMu.Lock()
	defer r.warnMu.Unlock()
	return append([]string(nil), r.warned...)
}

// KillGrace is how long the processes ended for a removal in r have
// between SIGTERM and SIGKILL: [remove].kill_grace, or its default while
// the policy cannot be read (a forced removal goes on without it).
func KillGrace(r *Repo) time.Duration {
	pol, err := r.Policy()
	if err != nil {
		pol = policy.Default()
	}
	return time.Duration(pol.Remove.KillGrace)
}

// Notef prints a note on stderr.
func (r *Repo) Notef(format string, args ...any) {
	fmt.Fprintf(r.opts.Stderr, format+"\n", args...)
}

// Resolve returns the live env an identity names, its own or through a
// link (then link is set), or a not-found error (exit 7).
func (r *Repo) Resolve(ctx context.Context, identity string) (*state.Env, *state.Link, error) {
	if _, err := policy.ParseIdentity(identity); err != nil {
		return nil, nil, err
	}
	env, link, err := r.Store.Resolve(ctx, identity)
	if err != nil {
		return nil, nil, err
	}
	if env == nil {
		return nil, nil, noEnv(identity)
	}
	return env, link, nil
}

// Find returns the env an identity names: its live env, its own or
// through a link, else its latest destroyed one; a not-found error (exit
// 7) when it never had one.
func (r *Repo) Find(ctx context.Context, identity string) (*state.Env, error) {
	if _, err := policy.ParseIdentity(identity); err != nil {
		return nil, err
	}
	env, _, err := r.Store.Resolve(ctx, identity)
	if env == nil && err == nil {
		env, err = r.Store.Latest(ctx, identity)
	}
	if env == nil && err == nil {
		err = noEnv(identity)
	}
	return env, err
}

func noEnv(identity string) error {
	return exitcode.New(exitcode.NotFound, "no environment for %s: `git apex list` shows them, `git apex start %s` makes one", identity, identity)
}

// Lock takes the repository lock, under which everything that changes the
// repository runs, once the state database can take the record of it: a
// database from a newer git-apex, or a read-only one, stops the change
// before anything on disk moves.
func (r *Repo) Lock(ctx context.Context) (*gitx.Locked, error) {
	if err := r.Store.CheckWritable(); err != nil {
		return nil, err
	}
	return r.Git.Lock(ctx)
}

// LockedEnv takes the repository lock and resolves identity under it.
// The caller unlocks lk when err is nil.
func (r *Repo) LockedEnv(ctx context.Context, identity string) (*gitx.Locked, *state.Env, *state.Link, error) {
	if _, err := policy.ParseIdentity(identity); err != nil {
		return nil, nil, nil, err
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	env, link, err := r.Resolve(ctx, identity)
	if err != nil {
		lk.Unlock()
		return nil, nil, nil, err
	}
	return lk, env, link, nil
}

// Snapshot reads git's worktrees and the live envs, under the lock.
func (r *Repo) Snapshot(ctx context.Context, lk *gitx.Locked) ([]gitx.Worktree, []*state.Env, error) {
	worktrees, err := lk.Worktrees(ctx)
	if err != nil {
		return nil, nil, err
	}
	envs, err := r.Store.Envs(ctx, false)
	return worktrees, envs, err
}

// Short abbreviates a commit hash for messages.
func Short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
