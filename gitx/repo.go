// Package gitx is the only place that runs the git binary. It opens a
// repository once (absolute paths for the working tree, git dir and common
// dir), runs every git command through one exec path with a fixed
// environment, parses only machine formats, and returns a typed Error for
// every failure.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/trap"
)

// Repo is an opened repository, seen from one of its working trees.
type Repo struct {
	Toplevel  string // the working tree the command was started in; the bare repository, started in its directory
	GitDir    string // that working tree's git dir
	CommonDir string // the git dir shared by every worktree
	Head      string // commit HEAD points at; "" when the current branch has no commits
	// Bare is set for a repository with no main checkout: a bare one
	// (proj.git), from one of its worktrees or its own directory.
	// MainRoot is then the bare directory, as git's first worktree is.
	Bare bool
	// Name is what policy templates call {repo}: the main checkout's
	// directory name; a bare repository's without .git ("proj" for
	// proj.git), or its parent's when a hidden name is left (proj/.bare).
	Name string

	mainRoot string // MainRoot, computed once
}

// Error is a failed git command.
type Error struct {
	Args   []string // arguments after "git"
	Dir    string   // directory it ran in
	Status int      // git's exit status, -1 when it could not be started
	Stderr string   // what git printed on stderr, trimmed
}

func (e *Error) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Status)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// ExitCode reports that a git failure exits with code 5.
func (e *Error) ExitCode() int { return exitcode.Git }

// locationVars are the variables that tie git to one repository
// (`git rev-parse --local-env-vars`, less the user's -c settings). A hook
// inherits them; they are removed before git runs anywhere else.
var locationVars = map[string]bool{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_CONFIG":                       true,
	"GIT_OBJECT_DIRECTORY":             true,
	"GIT_DIR":                          true,
	"GIT_WORK_TREE":                    true,
	"GIT_IMPLICIT_WORK_TREE":           true,
	"GIT_GRAFT_FILE":                   true,
	"GIT_INDEX_FILE":                   true,
	"GIT_NO_REPLACE_OBJECTS":           true,
	"GIT_REPLACE_REF_BASE":             true,
	"GIT_PREFIX":                       true,
	"GIT_SHALLOW_FILE":                 true,
	"GIT_COMMON_DIR":                   true,
}

// CleanEnv returns the process environment without what git adds when it
// runs `git apex`: its location variables (a hook's repository),
// GIT_EXEC_PATH, and the exec path it puts at the front of PATH. It is
// the environment of everything git-apex runs on the host, so a command
// in an env sees the user's environment, not git's internals. It is
// shared, and clipped so that an append to it (a command's own
// variables) copies it: batch tasks running at once each append their
// APEX_ID, and once wrote it over one another's (and over gitEnv's).
var CleanEnv = sync.OnceValue(func() []string {
	var env []string
	execPath := os.Getenv("GIT_EXEC_PATH")
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case locationVars[name] || name == "GIT_EXEC_PATH":
			continue
		case name == "PATH" && execPath != "":
			if dirs := filepath.SplitList(value); len(dirs) > 0 && dirs[0] == execPath {
				kv = "PATH=" + strings.Join(dirs[1:], string(os.PathListSeparator))
			}
		}
		env = append(env, kv)
	}
	return slices.Clip(env)
})

// gitEnv is the environment every git command after Open runs with.
var gitEnv = sync.OnceValue(func() []string {
	return append(CleanEnv(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
})

// command is one git invocation.
type command struct {
	dir      string
	args     []string
	readOnly bool     // sets GIT_OPTIONAL_LOCKS=0
	env      []string // nil: gitEnv()
	stdin    io.Reader
	// inEnv marks a command run in an environment's worktree: it runs no
	// hooks and does not recurse into submodules, whatever the
	// repository's config says.
	inEnv bool
	// terminal gives git this process's stderr, a terminal, instead of
	// a buffer: git then shows its progress there (after
	// GIT_PROGRESS_DELAY seconds, 1 unless the user set it), and its
	// messages are not kept for the error.
	terminal bool
	// remote marks a command that talks to a remote (clone, fetch,
	// ls-remote): ssh may ask on the terminal for a passphrase or a host
	// key (see foreground).
	remote bool
}

// foreground reports whether c runs in git-apex's own process group,
// where the terminal's keys reach it: when it shows progress there
// (git shows it only to the foreground group), or may ask there (ssh
// reading /dev/tty from another group would be stopped). Every other
// git runs in a process group of its own, where a Ctrl-C typed on the
// terminal does not reach it: git-apex alone decides, through ctx, when
// git stops (SIGTERM to its group). So clean-up that must finish after
// an interrupt (hostexec.Finishing: a slot's removal, say) is not
// killed half-way by the same key, and a git that fails is never one
// the key killed, taken for a real failure.
func (c command) foreground() bool { return c.terminal || c.remote }

// safeConfig is set for every git command: nothing git-apex runs starts
// a file system monitor named by the repository's config. The settings
// reach the git processes git itself starts (GIT_CONFIG_PARAMETERS), and
// a command-line setting beats every config file.
var safeConfig = []string{"-c", "core.fsmonitor=false"}

// noHooks makes git run none of the repository's hooks: pool slots are
// made and switched without them, so a cloned repository's post-checkout
// never runs unasked, and a bundle from a container is fetched without.
var noHooks = []string{"-c", "core.hooksPath=" + os.DevNull}

// envConfig is added for commands run in an environment's worktree.
var envConfig = append(noHooks, "-c", "submodule.recurse=false")

// run is the one exec path: every git process starts here.
func run(ctx context.Context, c command) (string, error) {
	args := safeConfig[:len(safeConfig):len(safeConfig)]
	if c.inEnv {
		args = append(args, envConfig...)
	}
	limited, cancel, bound := bounded(ctx, c)
	defer cancel()
	if bound != nil && limited.Err() != nil && ctx.Err() == nil {
		return "", &TimeoutError{Identity: bound.identity, Dir: c.dir, Args: c.args, Limit: bound.limit}
	}
	watched, trapped := trap.Watch(limited, c.dir, c.inEnv) // in an env's worktree, no trap may hold git
	cmd := exec.CommandContext(watched, "git", append(args, c.args...)...)
	// Interrupted, git gets SIGTERM, so it removes its lock files (and
	// so does what it started, in its group); a hook it started may
	// still hold its output open, so stop waiting after a while (then it
	// is killed).
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if !c.foreground() {
		cmd.SysProcAttr = ownGroup()
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	}
	cmd.WaitDelay = 2 * time.Second
	cmd.Dir = c.dir
	cmd.Env = c.env
	if cmd.Env == nil {
		cmd.Env = gitEnv()
	}
	if c.readOnly {
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], "GIT_OPTIONAL_LOCKS=0")
	}
	cmd.Stdin = c.stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if c.terminal {
		cmd.Stderr = os.Stderr
		if os.Getenv("GIT_PROGRESS_DELAY") == "" {
			cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], "GIT_PROGRESS_DELAY=1")
		}
	}
	err := cmd.Run()
	if terr := trapped(); terr != nil || err == nil {
		return stdout.String(), terr
	}
	if ctx.Err() != nil {
		return stdout.String(), ctx.Err()
	}
	if bound != nil && limited.Err() != nil {
		return stdout.String(), &TimeoutError{Identity: bound.identity, Dir: c.dir, Args: c.args, Limit: bound.limit}
	}
	status := -1
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		status = exit.ExitCode()
	}
	stderrText := strings.TrimSpace(stderr.String())
	if status == -1 {
		stderrText = err.Error()
	}
	return stdout.String(), &Error{Args: c.args, Dir: c.dir, Status: status, Stderr: stderrText}
}

// runIn runs git in dir (the working tree when dir is "") and returns
// stdout. In a directory other than the common dir and the main checkout,
// that is, in an environment's worktree, git runs no hooks and does not
// recurse into submodules. It is unexported: what changes refs or
// worktrees is a method of Locked, so it cannot run without the lock.
func (r *Repo) runIn(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, r.command(dir, args, false))
}

// readIn is runIn for commands that change nothing; git skips optional
// locks.
func (r *Repo) readIn(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, r.command(dir, args, true))
}

// HooksDir is the directory git runs hooks from, as git computes it: it
// follows core.hooksPath (relative paths, as husky sets, included) and
// linked worktrees (a bare repository's among them), asked in the
// working tree git-apex runs in without the settings of an env's.
func (r *Repo) HooksDir(ctx context.Context) (string, error) {
	out, err := run(ctx, command{dir: r.Toplevel, args: []string{"rev-parse", "--path-format=absolute", "--git-path", "hooks"}, readOnly: true})
	return strings.TrimSpace(out), err
}

// WorktreeHead is the commit checked out in the working tree at dir.
func (r *Repo) WorktreeHead(ctx context.Context, dir string) (string, error) {
	out, err := r.readIn(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	return strings.TrimSpace(out), err
}

func (r *Repo) command(dir string, args []string, readOnly bool) command {
	if dir == "" {
		dir = r.Toplevel
	}
	return command{dir: dir, args: args, readOnly: readOnly, inEnv: dir != r.CommonDir && dir != r.MainRoot()}
}

// Open finds the repository that dir belongs to: a working tree's, or a
// bare repository's, from one of its worktrees or from its own directory.
// It runs a single git command (two in a bare repository's directory) and
// fails with a usage error (exit 2) outside a repository, or inside a
// non-bare repository's git directory. It honours GIT_DIR and
// GIT_WORK_TREE as git itself would; later commands do not.
func Open(ctx context.Context, dir string) (*Repo, error) {
	args := []string{"rev-parse", "--path-format=absolute",
		"--git-dir", "--git-common-dir", "--is-bare-repository", "--show-toplevel",
		"--verify", "-q", "HEAD"}
	out, err := run(ctx, command{dir: dir, args: args, env: locatingEnv()})
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil {
		var gerr *Error
		if !errors.As(err, &gerr) {
			return nil, err
		}
		switch {
		case len(lines) >= 3 && lines[2] == "true":
			return openBareDir(ctx, lines[1])
		case len(lines) == 3:
			return nil, exitcode.New(exitcode.Usage, "not inside a git working tree (%s is a git directory): cd to the working tree", dir)
		case len(lines) == 4:
			// --verify failed: HEAD names a branch with no commits yet.
			return openedRepo(lines[0], lines[1], lines[3], ""), nil
		case strings.Contains(gerr.Stderr, "not a git repository"):
			return nil, exitcode.New(exitcode.Usage, "not inside a git repository (%s): cd into one, or run `git init`", dir)
		}
		return nil, err
	}
	if len(lines) != 5 {
		return nil, fmt.Errorf("cannot read git rev-parse output: %q", out)
	}
	return openedRepo(lines[0], lines[1], lines[3], lines[4]), nil
}

// openBareDir opens the bare repository at commonDir, found from its own
// directory or one below it (a linked worktree's git directory there
// included): commands run in it, and HEAD is its HEAD.
func openBareDir(ctx context.Context, commonDir string) (*Repo, error) {
	out, err := run(ctx, command{dir: commonDir, args: []string{"rev-parse", "--verify", "-q", "HEAD"}, readOnly: true})
	if gerr := (*Error)(nil); err != nil && !errors.As(err, &gerr) {
		return nil, err
	}
	return openedRepo(commonDir, commonDir, commonDir, strings.TrimSpace(out)), nil
}

// locatingEnv is the environment of the one git command that finds the
// repository: the caller's own, GIT_DIR and GIT_WORK_TREE included.
func locatingEnv() []string {
	return append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}

// openedRepo is the repository whose git directory and common dir git
// found. A common dir not named .git is no checkout's: the repository is
// bare (or keeps its git directory apart, which git treats alike: the
// first entry of `git worktree list` is then the common dir).
func openedRepo(gitDir, commonDir, toplevel, head string) *Repo {
	r := &Repo{GitDir: gitDir, CommonDir: commonDir, Toplevel: toplevel, Head: head}
	real := hostpath.RealPath(commonDir)
	r.mainRoot = strings.TrimSuffix(real, string(os.PathSeparator)+".git")
	r.Bare = r.mainRoot == real
	r.Name = filepath.Base(r.mainRoot)
	if r.Bare {
		r.Name = strings.TrimSuffix(r.Name, ".git")
		if r.Name == "" || strings.HasPrefix(r.Name, ".") {
			r.Name = filepath.Base(filepath.Dir(r.mainRoot))
		}
	}
	return r
}

// RequireCommits fails with a usage error when the repository has no commits.
func (r *Repo) RequireCommits() error {
	if r.Head == "" {
		return exitcode.New(exitcode.Usage, "the repository at %s has no commits yet: make a first commit, then try again", r.Toplevel)
	}
	return nil
}

// MainRoot is the main checkout, computed as git computes the first
// entry of `git worktree list`: the real path of the common dir without
// its "/.git"; in a bare repository, which has no main checkout, the
// bare directory. It runs no git.
func (r *Repo) MainRoot() string {
	return r.mainRoot
}

// ApexDir is git-apex's own directory inside the common git dir.
func (r *Repo) ApexDir() string {
	return r.CommonDir + string(os.PathSeparator) + "apex"
}

// Clone makes a clone of url at dir, bare or with a checkout made with no
// hooks, by way of a temporary directory renamed into place, so that a
// clone cut short is never used. An existing clone at dir is kept.
func Clone(ctx context.Context, url, dir string, bare bool) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	tmp := dir + ".cloning-" + fmt.Sprint(os.Getpid())
	args := append(noHooks[:len(noHooks):len(noHooks)], "clone", "--quiet", "--no-recurse-submodules")
	if bare {
		args = append(args, "--bare")
	}
	if _, err := run(ctx, command{dir: "/", args: append(args, "--", url, tmp), remote: true}); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return nil // another process made it meanwhile
		}
		return err
	}
	return nil
}

// Fetch updates a bare clone's branches from its origin.
func (l *Locked) Fetch(ctx context.Context) error {
	_, err := l.runRemote(ctx, l.CommonDir, "fetch", "--quiet", "origin", "+refs/heads/*:refs/heads/*")
	return err
}

// runRemote is runIn for a command that talks to a remote
// (command.remote).
func (r *Repo) runRemote(ctx context.Context, dir string, args ...string) (string, error) {
	c := r.command(dir, args, false)
	c.remote = true
	return run(ctx, c)
}
