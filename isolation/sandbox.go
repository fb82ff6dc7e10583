package isolation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/gitx"
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
//	git/     the private git directory, mounted read-write at sandboxGitDir
//	gitfile  "gitdir: <sandboxGitDir>", mounted read-only over the
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
// brought onto the branch.

// sandboxGitDir is where a container sees its env's private git directory.
const sandboxGitDir = "/git-apex/gitdir"

// sandbox is one full env's (or batch task's) private git directory.
type sandbox struct {
	dir      string // <apex>/sandbox/<name>
	name     string // the container's name
	identity string // the env's, or the batch task's
	worktree string // the worktree the container works in
	ref      string // what comes back: refs/heads/<branch>, or HEAD when detached
}

// sandboxFor names the sandbox of identity's container, working in
// worktree on branch ("" when detached).
func (m *Manager) sandboxFor(identity, worktree, branch string) *sandbox {
	ref := "HEAD"
	if branch != "" {
		ref = "refs/heads/" + branch
	}
	name := m.containerName(identity)
	return &sandbox{dir: filepath.Join(m.Git.ApexDir(), "sandbox", name), name: name, identity: identity, worktree: worktree, ref: ref}
}

func (s *sandbox) gitDir() string  { return filepath.Join(s.dir, "git") }
func (s *sandbox) gitfile() string { return filepath.Join(s.dir, "gitfile") }

// exists reports whether the sandbox was made.
func (s *sandbox) exists() bool { return exists(s.gitfile()) }

// makeSandbox makes a fresh sandbox with ref at tip and the index at
// tip's tree, replacing whatever was left at its place. owner, when not
// "", is the uid:gid the container runs as: the private git directory is
// given to it.
func (m *Manager) makeSandbox(ctx context.Context, s *sandbox, tip, owner string) error {
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
	head := tip + "\n"
	if s.ref != "HEAD" {
		head = "ref: " + s.ref + "\n"
		if err := writeNew(filepath.Join(git, filepath.FromSlash(s.ref)), tip+"\n"); err != nil {
			return err
		}
	}
	exclude, _ := os.ReadFile(filepath.Join(m.Git.CommonDir, "info", "exclude"))
	files := map[string]string{
		"HEAD":                    head,
		"config":                  config,
		"objects/info/alternates": strings.Join(m.objectDirs(), "\n") + "\n",
		"info/exclude":            string(exclude),
	}
	for name, content := range files {
		if err := writeNew(filepath.Join(git, name), content); err != nil {
			return err
		}
	}
	if err := m.Git.InitPrivateIndex(ctx, git, tip); err != nil {
		return err
	}
	if err := writeNew(s.gitfile(), "gitdir: "+sandboxGitDir+"\n"); err != nil {
		return err
	}
	if err := s.saveSynced(tip, tip); err != nil {
		return err
	}
	if err := m.protectGitlinks(ctx, s, tip); err != nil {
		return err
	}
	return chownTree(git, owner)
}

// protectGitlinks records commit's submodule paths as the ones the
// sandbox's container gets read-only.
func (m *Manager) protectGitlinks(ctx context.Context, s *sandbox, commit string) error {
	paths, err := m.Git.Gitlinks(ctx, commit)
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, "gitlinks.tmp")
	if err := os.WriteFile(tmp, []byte(strings.Join(paths, "\x00")), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "gitlinks"))
}

// gitlinks are the submodule paths read-only in the sandbox's container.
func (s *sandbox) gitlinks() map[string]bool {
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
func (m *Manager) unprotected(ctx context.Context, s *sandbox, commit string) ([]string, error) {
	paths, err := m.Git.Gitlinks(ctx, commit)
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
func (m *Manager) objectDirs() []string {
	objects := filepath.Join(m.Git.CommonDir, "objects")
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
	uidText, gidText, _ := strings.Cut(owner, ":")
	uid, err1 := strconv.Atoi(uidText)
	gid, err2 := strconv.Atoi(gidText)
	if owner == "" || err1 != nil || err2 != nil || os.Getuid() != 0 || uid == 0 {
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

func (s *sandbox) loadSynced() synced {
	data, _ := os.ReadFile(filepath.Join(s.dir, "synced"))
	host, private, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	return synced{host: host, private: private}
}

func (s *sandbox) saveSynced(host, private string) error {
	tmp := filepath.Join(s.dir, "synced.tmp")
	if err := os.WriteFile(tmp, []byte(host+" "+private+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "synced"))
}

// peek reads the sandbox's tip from its ref file, as data: it follows no
// link, opens nothing but a regular file, and never blocks. ok is false
// when the file is not a plain loose ref (packed, symbolic, or tampered
// with): the caller must then ask the container.
func (s *sandbox) peek() (tip string, ok bool) {
	dir, err := unix.Open(s.gitDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, s.ref, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return "", false
	}
	f := os.NewFile(uintptr(fd), s.ref)
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	buf := make([]byte, 128)
	n, _ := io.ReadFull(f, buf)
	tip = strings.TrimSpace(string(buf[:n]))
	if !isHash(tip) {
		return "", false
	}
	return tip, true
}

// isHash reports whether s is a full SHA-1 or SHA-256 object name.
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// exportScript runs inside the container: it prints the sandbox's tip of
// ref and, unless the host's tip already holds it, a bundle of the
// commits the host lacks.
const exportScript = `tip=$(git rev-parse -q --verify "$1^{commit}") || exit 0
echo "$tip"
git merge-base --is-ancestor "$tip" "$2" 2>/dev/null && exit 0
exec git bundle create - "$1" "^$2"`

// importScript runs inside the container: it moves ref from $3 to $2 (a
// commit the host made; the sandbox sees it through the borrowed
// objects), and the index with it when ref is checked out. It exits 3,
// changing nothing, when ref is no longer at $3.
const importScript = `cur=$(git rev-parse -q --verify "$1") || cur=
[ "$cur" = "$3" ] || exit 3
if [ "$1" = HEAD ] || [ "$(git symbolic-ref -q HEAD)" = "$1" ]; then
	git read-tree -m "$3" "$2" 2>/dev/null || git read-tree "$2" || exit 1
fi
git update-ref --no-deref "$1" "$2" "$3"`

// broughtBack says what an exchange brought from a sandbox.
type broughtBack struct {
	From, To string // the host's tip before and after, when it moved
	Kept     string // the ref commits that could not move the branch are kept under
	Why      string // why they could not, ending in what was kept ("kept it", "kept them")
}

// unchanged reports whether the sandbox's tip is where the last exchange
// left it: one file read, no runtime, no git.
func (s *sandbox) unchanged() bool {
	tip, ok := s.peek()
	return ok && tip == s.loadSynced().private
}

// bringBack brings the commits a container made on its sandbox's ref to
// the host, by fast-forward only: commits that are not a fast-forward,
// that add submodules, or that the host's staged changes stand in the way
// of, are kept under refs/apex/kept/ instead. It takes the repository
// lock for the update unless lk is held already. When the sandbox's tip
// did not move it costs one file read, and needs no runtime.
func (m *Manager) bringBack(ctx context.Context, lk *gitx.Locked, ctr string, s *sandbox) (broughtBack, error) {
	if s.unchanged() {
		return broughtBack{}, nil
	}
	rt, err := m.runningContainer(ctx, ctr)
	if err != nil {
		return broughtBack{}, err
	}
	host, err := m.hostTip(ctx, s)
	if err != nil {
		return broughtBack{}, err
	}
	incoming := filepath.Join(s.dir, "incoming.bundle")
	defer os.Remove(incoming)
	out, err := os.Create(incoming)
	if err != nil {
		return broughtBack{}, err
	}
	split := &firstLine{rest: out}
	var stderr bytes.Buffer
	code, err := rt.Exec(ctx, ctr, container.ExecSpec{Cmd: []string{"sh", "-c", exportScript, "export", s.ref, host},
		WorkDir: s.worktree, Env: sandboxEnv(s), Stdout: split, Stderr: &stderr})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return broughtBack{}, fmt.Errorf("cannot read the commits made in the container: %w", err)
	}
	tip := strings.TrimSpace(split.line.String())
	if tip == "" {
		return broughtBack{}, nil // no commit on the ref inside
	}
	if !isHash(tip) {
		return broughtBack{}, fmt.Errorf("cannot read the commits made in the container: it answered %q", short(tip))
	}
	if lk == nil {
		if lk, err = m.lock(ctx); err != nil {
			return broughtBack{}, err
		}
		defer lk.Unlock()
		if host, err = m.hostTip(ctx, s); err != nil { // it may have moved meanwhile
			return broughtBack{}, err
		}
	}
	return m.takeIn(ctx, lk, s, incoming, split.wrote, host, tip)
}

// takeIn checks and applies what a sandbox sent: tip, with the commits
// the host lacks in the bundle file when there are any.
func (m *Manager) takeIn(ctx context.Context, lk *gitx.Locked, s *sandbox, bundle string, hasBundle bool, host, tip string) (broughtBack, error) {
	var res broughtBack
	if hasBundle {
		staging := "refs/apex/incoming/" + s.identity
		if err := lk.FetchBundle(ctx, bundle, s.ref, staging); err != nil {
			return res, fmt.Errorf("cannot take the container's commits: %w", err)
		}
		defer lk.DeleteRef(context.WithoutCancel(ctx), staging)
		fetched, err := m.Git.Commit(ctx, staging)
		if err != nil {
			return res, err
		}
		tip = fetched // what the bundle holds, whatever the first line said
	} else if _, err := m.Git.Commit(ctx, tip); err != nil {
		return res, fmt.Errorf("cannot take the container's commits: it names %s, which the repository does not have", short(tip))
	}
	if held, err := m.Git.IsAncestor(ctx, tip, host); err != nil || held {
		return res, errors.Join(err, s.saveSynced(host, tip)) // the host has it all
	}
	var err error
	res.Why, err = m.whyNotForward(ctx, lk, s, host, tip)
	if err != nil {
		return res, err
	}
	if res.Why == "" {
		res.From, res.To = host, tip
		return res, s.saveSynced(tip, tip)
	}
	res.Kept = fmt.Sprintf("refs/apex/kept/%s/%d", s.identity, time.Now().UnixMilli())
	if err := lk.SetRef(ctx, m.Git.CommonDir, res.Kept, tip, ""); err != nil {
		return res, err
	}
	return res, s.saveSynced(host, tip)
}

// whyNotForward moves the host's ref (and its worktree's index) from
// host to tip when that is a fast-forward that adds no submodule and
// fits the host's staged changes; else it changes nothing and says why.
func (m *Manager) whyNotForward(ctx context.Context, lk *gitx.Locked, s *sandbox, host, tip string) (string, error) {
	if ahead, err := m.Git.IsAncestor(ctx, host, tip); err != nil || !ahead {
		return "the container's history is not a fast-forward of the host's (it was rewritten inside); kept it", err
	}
	if strays, err := m.unprotected(ctx, s, tip); err != nil || len(strays) > 0 {
		return fmt.Sprintf("the container's commits add submodules (%s), whose .git files it could point anywhere; kept them", strings.Join(strays, ", ")), err
	}
	// The index first: when the host's staged changes stand in the way,
	// nothing has moved yet.
	if err := lk.MoveIndex(ctx, s.worktree, host, tip); err != nil {
		return "staged changes in the host's worktree stand in the way of the container's commits (commit or unstage them, then fast-forward); kept them", nil
	}
	if err := lk.SetRef(ctx, s.worktree, s.ref, tip, host); err != nil {
		return "", errors.Join(err, lk.MoveIndex(ctx, s.worktree, tip, host))
	}
	return "", nil
}

// hostTip is the commit the host holds for a sandbox's ref.
func (m *Manager) hostTip(ctx context.Context, s *sandbox) (string, error) {
	if s.ref == "HEAD" {
		return m.Git.WorktreeHead(ctx, s.worktree)
	}
	return m.Git.Commit(ctx, s.ref)
}

// sendOver moves the sandbox's ref to the host's tip when the host moved
// it (commits made on the host, a rebase there) and the container has
// not moved it since the last exchange. It costs a git process and a
// file read when nothing moved.
func (m *Manager) sendOver(ctx context.Context, rt container.Runtime, ctr string, s *sandbox) error {
	last := s.loadSynced()
	host, err := m.hostTip(ctx, s)
	if err != nil || host == last.host {
		return err
	}
	if !s.unchanged() {
		return nil // the container moved it too: bringBack decides
	}
	if strays, err := m.unprotected(ctx, s, host); err != nil || len(strays) > 0 {
		if err != nil {
			return err
		}
		return fmt.Errorf("the host's commits add submodules (%s) whose directories its container could write; they are not given to it until it is made again: remove the container with `docker rm -f %s`, and the next exec makes it again",
			strings.Join(strays, ", "), s.name)
	}
	var stderr bytes.Buffer
	code, err := rt.Exec(ctx, ctr, container.ExecSpec{Cmd: []string{"sh", "-c", importScript, "import", s.ref, host, last.private},
		WorkDir: s.worktree, Env: sandboxEnv(s), Stdout: io.Discard, Stderr: &stderr})
	switch {
	case err != nil:
		return fmt.Errorf("cannot give the container the host's commits: %w", err)
	case code == 3:
		return nil
	case code != 0:
		return fmt.Errorf("cannot give the container the host's commits: exit status %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	return s.saveSynced(host, host)
}

// sandboxEnv is the environment of git-apex's own git commands inside a
// container: its private git directory, whatever the container did.
func sandboxEnv(s *sandbox) []string {
	return []string{"GIT_DIR=" + sandboxGitDir, "GIT_WORK_TREE=" + s.worktree, "LC_ALL=C"}
}

// firstLine passes everything after the first line to rest, and notes
// whether there was anything.
type firstLine struct {
	line  bytes.Buffer
	done  bool
	rest  io.Writer
	wrote bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	n := len(p)
	if !f.done {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if f.line.Len()+len(p) > 256 {
				return 0, errors.New("the first line is too long")
			}
			f.line.Write(p)
			return n, nil
		}
		f.line.Write(p[:i])
		f.done, p = true, p[i+1:]
	}
	if len(p) == 0 {
		return n, nil
	}
	f.wrote = true
	if _, err := f.rest.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// sandboxReport says on stderr what an exchange kept aside.
func (m *Manager) sandboxReport(identity, branch string, b broughtBack) {
	if b.Kept == "" {
		return
	}
	what := pick(branch == "", "HEAD", branch)
	m.warnf("%s: %s as %s; %s is unchanged: compare with `git log --oneline --graph %s %s`", identity, b.Why, b.Kept, what, what, b.Kept)
}
