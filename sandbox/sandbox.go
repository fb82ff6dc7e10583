// Package sandbox keeps the private git directory of each full env's
// container (and each contained batch task's), makes the container that
// works in it (starting it, or making it again, when it stopped or went),
// and moves commits between it and the host as checked data. It is the containment of full mode: nothing run in a container
// writes the host's git directory. It runs git on the host only through
// gitx and reaches the engine only through the container package.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/copymode"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// A full env's container never writes the host's git directory. Its git
// works in a private git directory of its own, the sandbox, which borrows
// the host's objects read-only (objects/info/alternates) and holds its
// own refs, index and new objects. What the container commits on the
// env's branch comes back to the host as data the host checks: after
// each exec, shell and batch task, and before a removal, git-apex asks
// the container for a bundle of the new commits, fetches it with every
// object checked, and moves the branch only by a fast-forward. A result
// that is not a fast-forward (history rewritten inside) is kept under
// refs/apex/kept/ and reported, never forced onto the branch. Commits
// made on the host reach the sandbox the other way before each exec.
//
// On the host a sandbox is <git common dir>/apex/sandbox/<container name>:
//
//	git/     the private git directory, mounted read-write at gitDirInside
//	gitfile  "gitdir: <gitDirInside>", mounted read-only over the
//	         worktree's .git file, which the container therefore never sees
//	synced   the host's and the sandbox's tips at the last exchange
//	gitlinks the submodule paths whose directories are read-only inside
//
// Only git/ is writable from the container. The host never runs git in
// it once a container has used it: it reads one ref file there (without
// following links), and takes everything else through the bundle.
//
// Submodules: a plain `git status` on the host enters every submodule
// directory that holds a .git, and obeys the config of the git directory
// it names. So a full env's submodules are not initialised, their
// directories are empty and read-only inside the container, and commits
// from the container that add a submodule elsewhere are kept aside, not
// brought onto the branch. A mounted worktree takes submodules at its top
// only (refuseNested): the directory above a deeper one can be renamed,
// its mount with it.

// gitDirInside is where a container sees its env's private git directory.
const gitDirInside = "/git-apex/gitdir"

// Sandbox is one full env's (or batch task's) private git directory.
type Sandbox struct {
	r        *repo.Repo
	dir      string // <apex>/sandbox/<name>
	name     string // the container's name
	identity string // the env's, or the batch task's
	worktree string // the worktree the container works in
	ref      string // what comes back: refs/heads/<branch>, or HEAD when detached
	start    string // the env's start commit (state.Env.StartCommit); "": none, a batch task's
	port     int    // the first of the env's port block, published with a bridge network; 0: none
	engine   *Engine
	pin      string // the record of the engine its env was made on (state.Env.Engine); "": none
}

// Engine is an engine a sandbox's container runs on: one of those a
// batch spreads its tasks over, or the one a full env was made on.
type Engine struct {
	Name     string // its Docker context
	Endpoint container.Endpoint
	Runtime  container.Runtime
}

// Connect reaches the engine of the Docker context name within the
// policy's connect_timeout.
func Connect(ctx context.Context, pol *policy.Policy, name string) (*Engine, error) {
	ep, err := container.ContextEndpoint(name)
	if err != nil {
		return nil, err
	}
	rt, _, err := container.Reach(ctx, ep, time.Duration(pol.Container.ConnectTimeout))
	if err != nil {
		return nil, fmt.Errorf("it does not answer: %w", err)
	}
	return &Engine{Name: name, Endpoint: ep, Runtime: rt}, nil
}

// On makes the sandbox's container run on engine.
func (s *Sandbox) On(engine *Engine) *Sandbox {
	s.engine = engine
	return s
}

// EngineOf is engine, or for nil the repository's own (named ""),
// connected.
func EngineOf(ctx context.Context, r *repo.Repo, engine *Engine) (*Engine, error) {
	if engine != nil {
		return engine, nil
	}
	rt, err := r.Runtime(ctx)
	if err != nil {
		return nil, err
	}
	ep, err := r.Endpoint(ctx)
	return &Engine{Endpoint: ep, Runtime: rt}, err
}

// on is the engine the sandbox's container runs on: a batch task's
// (On), else the one its env was made on, else the repository's own.
func (s *Sandbox) on(ctx context.Context) (*Engine, error) {
	if s.engine != nil || s.pin == "" {
		return EngineOf(ctx, s.r, s.engine)
	}
	rt, ep, err := s.r.Engine(ctx, s.pin)
	if err != nil {
		return nil, err
	}
	return &Engine{Name: ep.Name, Endpoint: ep, Runtime: rt}, nil
}

// For names the sandbox of identity's container, working in worktree on
// branch ("" when detached).
func For(r *repo.Repo, identity, worktree, branch string) *Sandbox {
	ref := "HEAD"
	if branch != "" {
		ref = "refs/heads/" + branch
	}
	name := ContainerName(r, identity)
	return &Sandbox{r: r, dir: filepath.Join(Root(r), name), name: name, identity: identity, worktree: worktree, ref: ref}
}

// OfEnv is a full env's sandbox, its container on the engine the env
// was made on.
func OfEnv(r *repo.Repo, env *state.Env) *Sandbox {
	s := For(r, env.Identity, env.Path, env.Branch).WithPorts(env.Metadata[state.PortKey])
	s.pin, s.start = env.Engine, env.StartCommit
	return s
}

// WithPorts makes the container publish the port block that starts at
// first (APEX_PORT; "" for none) when its network is a bridge.
func (s *Sandbox) WithPorts(first string) *Sandbox {
	s.port, _ = strconv.Atoi(first)
	return s
}

// Root is the directory that holds a repository's sandboxes, each named
// after its container.
func Root(r *repo.Repo) string { return filepath.Join(r.Git.ApexDir(), "sandbox") }

// Dir is where the sandbox is on the host.
func (s *Sandbox) Dir() string { return s.dir }

// Name is the name of the sandbox's container.
func (s *Sandbox) Name() string { return s.name }

func (s *Sandbox) gitDir() string  { return filepath.Join(s.dir, "git") }
func (s *Sandbox) gitfile() string { return filepath.Join(s.dir, "gitfile") }

// Exists reports whether the sandbox was made.
func (s *Sandbox) Exists() bool { return hostpath.Exists(s.gitfile()) }

// Make makes a fresh sandbox with ref at tip and the index at tip's tree,
// replacing whatever was left at its place, for the policy's container:
// its private git directory is given to the user the container runs as,
// and it is made for copy mode (shallow, its objects its own: see "Copy
// mode") when the policy's containers get their files by copy.
func (s *Sandbox) Make(ctx context.Context, tip string, pol *policy.Policy) error {
	owner, _, err := s.user(ctx, pol)
	if err != nil {
		return err
	}
	byCopy, err := s.byCopy(ctx, pol)
	if err != nil {
		return err
	}
	gitlinks, err := s.r.Git.Gitlinks(ctx, tip)
	if err != nil {
		return err
	}
	if !byCopy {
		if err := s.refuseNested(gitlinks); err != nil {
			return err
		}
	}
	if _, err := s.r.Private(Root(s.r)); err != nil {
		return fmt.Errorf("cannot close %s to other users: %w", Root(s.r), err)
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return err
	}
	git := s.gitDir()
	for _, dir := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(git, dir), 0o755); err != nil {
			return err
		}
	}
	version, extensions := 0, ""
	if len(tip) == 64 { // a SHA-256 repository
		version, extensions = 1, "[extensions]\n\tobjectformat = sha256\n"
	}
	config := fmt.Sprintf("[core]\n\trepositoryformatversion = %d\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n%s", version, extensions)
	// The container gets none of the host's environment or config: a
	// plain `git commit` inside commits as the host's user would.
	if name, email, ok := gitx.Author(ctx, s.r.Git.CommonDir); ok {
		quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
		config += fmt.Sprintf("[user]\n\tname = \"%s\"\n\temail = \"%s\"\n", quote.Replace(name), quote.Replace(email))
	}
	head := tip + "\n"
	if s.ref != "HEAD" {
		head = "ref: " + s.ref + "\n"
		if err := writeNew(filepath.Join(git, filepath.FromSlash(s.ref)), tip+"\n"); err != nil {
			return err
		}
	}
	exclude, _ := os.ReadFile(filepath.Join(s.r.Git.CommonDir, "info", "exclude"))
	files := map[string]string{"HEAD": head, "config": config, "info/exclude": string(exclude)}
	if byCopy {
		files["shallow"] = tip + "\n"
		if err := s.r.Git.PackCommit(ctx, tip, "", filepath.Join(git, "objects", "pack")); err != nil {
			return err
		}
	} else {
		files["objects/info/alternates"] = strings.Join(objectDirs(s.r), "\n") + "\n"
	}
	for name, content := range files {
		if err := writeNew(filepath.Join(git, name), content); err != nil {
			return err
		}
	}
	if err := s.r.Git.InitPrivateIndex(ctx, git, tip); err != nil {
		return err
	}
	if err := writeNew(s.gitfile(), "gitdir: "+gitDirInside+"\n"); err != nil {
		return err
	}
	if err := s.saveSynced(tip, tip); err != nil {
		return err
	}
	if err := s.protect(gitlinks); err != nil {
		return err
	}
	if byCopy { // what the host held is recorded when the files are copied in
		if err := copymode.Begin(s.dir, tip); err != nil {
			return err
		}
	}
	return chownTree(git, owner)
}

// ProtectGitlinks records commit's submodule paths as the ones the
// sandbox's container gets read-only. A mounted worktree may have none
// below its top (refuseNested).
func (s *Sandbox) ProtectGitlinks(ctx context.Context, commit string, mounted bool) error {
	paths, err := s.r.Git.Gitlinks(ctx, commit)
	if err != nil {
		return err
	}
	if mounted {
		if err := s.refuseNested(paths); err != nil {
			return err
		}
	}
	return s.protect(paths)
}

// protect records paths as the submodule paths read-only in the
// sandbox's container (gitlinks).
func (s *Sandbox) protect(paths []string) error {
	tmp := filepath.Join(s.dir, "gitlinks.tmp")
	if err := os.WriteFile(tmp, []byte(strings.Join(paths, "\x00")), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "gitlinks"))
}

// refuseNested refuses (exit 3) submodule paths below a mounted
// worktree's top (deps/lib): only the submodule's directory is mounted
// read-only, and the container may rename the directory above it (the
// mount moves with it: `mv deps deps.old`), make deps/lib again with a
// .git whose config sets core.fsmonitor, and a plain `git status` on the
// host enters it, a process it left behind doing so after every check.
// A mount point itself cannot be renamed, so one at the top stays.
func (s *Sandbox) refuseNested(paths []string) error {
	var nested []string
	for _, p := range paths {
		if strings.Contains(p, "/") {
			nested = append(nested, p)
		}
	}
	if len(nested) == 0 {
		return nil
	}
	return exitcode.New(exitcode.Refused, "%s has submodules below the top of its worktree (%s), which its container could move away and plant again with a .git that a plain `git status` on the host obeys; a full environment with its worktree mounted takes only top-level submodules: use copy mode ([container].transfer = \"copy\"), or move them to the top",
		s.identity, strings.Join(nested, ", "))
}

// gitlinks are the submodule paths read-only in the sandbox's container.
func (s *Sandbox) gitlinks() map[string]bool {
	data, _ := os.ReadFile(filepath.Join(s.dir, "gitlinks"))
	set := map[string]bool{}
	for _, p := range strings.Split(string(data), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set
}

// unprotected lists commit's submodule paths that the sandbox's container
// may write in.
func (s *Sandbox) unprotected(ctx context.Context, commit string) ([]string, error) {
	paths, err := s.r.Git.Gitlinks(ctx, commit)
	if err != nil {
		return nil, err
	}
	have := s.gitlinks()
	var out []string
	for _, p := range paths {
		if !have[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// objectDirs are the host's object directories the sandbox borrows, and
// the container mounts read-only: the common dir's, and those it borrows
// itself.
func objectDirs(r *repo.Repo) []string {
	objects := filepath.Join(r.Git.CommonDir, "objects")
	dirs := []string{objects}
	data, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return dirs
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		dirs = append(dirs, filepath.Clean(line))
	}
	return dirs
}

// writeNew writes a file that must not exist yet, making its directory.
func writeNew(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	return errors.Join(err, f.Close())
}

// chownTree gives dir and everything below it to owner ("uid:gid"), when
// owner is numeric and this process may (it runs as root).
func chownTree(dir, owner string) error {
	uid, gid, ok := copymode.NumericOwner(owner)
	if !ok || os.Getuid() != 0 || uid == 0 {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// synced is what the two sides held at the last exchange.
type synced struct{ host, private string }

func (s *Sandbox) loadSynced() synced {
	data, _ := os.ReadFile(filepath.Join(s.dir, "synced"))
	host, private, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	return synced{host: host, private: private}
}

func (s *Sandbox) saveSynced(host, private string) error {
	tmp := filepath.Join(s.dir, "synced.tmp")
	if err := os.WriteFile(tmp, []byte(host+" "+private+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "synced"))
}
