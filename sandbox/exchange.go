package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/copymode"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/planted"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
)

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
	git read-tree -m -i "$3" "$2" 2>/dev/null || git read-tree "$2" || exit 1
fi
git update-ref --no-deref "$1" "$2" "$3"`

// Result says what an exchange brought from a sandbox.
type Result struct {
	From, To string // the host's tip before and after, when it moved
	Kept     string // the ref commits that could not move the branch are kept under
	Why      string // why they could not, ending in what was kept ("kept it", "kept them")
	// Copy mode: the files written or removed in the host's worktree, and
	// the conflicts in which the host's file was kept.
	Files     int
	Conflicts []string
}

// Unchanged reports whether the sandbox's tip is where the last exchange
// left it: one file read, no runtime, no git. A copied container's is
// never known to be: its files may have changed.
func (s *Sandbox) Unchanged() bool {
	if s.Copied() {
		return false
	}
	tip, ok := s.peek()
	return ok && tip == s.loadSynced().private
}

// BringBack brings the commits a container made on its sandbox's ref to
// the host, by fast-forward only: commits that are not a fast-forward,
// that add submodules, or that the host's staged changes stand in the way
// of, are kept under refs/apex/kept/ instead. A copied container's
// changed files come back first (copymode.Worktree.Receive, then Place).
// It takes the repository lock for the update unless lk is held already,
// and only once everything is read from the container. When the
// sandbox's tip did not move it costs one file read, and needs no runtime.
func (s *Sandbox) BringBack(ctx context.Context, lk *gitx.Locked, ctr string) (Result, error) {
	if s.Unchanged() {
		return Result{}, nil
	}
	rt, err := s.running(ctx, ctr)
	if err != nil {
		return Result{}, err
	}
	host, err := s.HostTip(ctx)
	if err != nil {
		return Result{}, err
	}
	copied := s.Copied()
	basis := host
	if copied { // it lacks what the host made since: the bundle starts at what it had
		basis = s.loadSynced().private
	}
	incoming := filepath.Join(s.dir, "incoming.bundle")
	defer os.Remove(incoming)
	out, err := os.Create(incoming)
	if err != nil {
		return Result{}, err
	}
	c := policyOf(s.r).Container
	split := &firstLine{rest: s.limited(out, c)}
	var stderr bytes.Buffer
	rctx, cancel := context.WithTimeout(ctx, time.Duration(c.ExchangeTimeout))
	defer cancel()
	code, err := rt.Exec(rctx, ctr, container.ExecSpec{Cmd: []string{"sh", "-c", exportScript, "export", s.ref, basis},
		WorkDir: s.worktree, Env: s.gitEnv(), Stdout: split, Stderr: &stderr})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return Result{}, fmt.Errorf("cannot read the commits made in the container: %w", readError(ctx, rctx, c, err))
	}
	tip := strings.TrimSpace(split.line.String())
	if tip == "" && !copied {
		return Result{}, nil // no commit on the ref inside
	}
	if tip != "" && !gitx.IsObjectID(tip) {
		return Result{}, fmt.Errorf("cannot read the commits made in the container: it answered %q", repo.Short(tip))
	}
	// Its objects are checked before the lock, within the exchange's
	// time: git inflates them all, and a bundle may be a bomb.
	var bundle *checked
	if tip != "" && split.wrote {
		if bundle, err = checkBundle(rctx, s.r, incoming); err != nil && rctx.Err() != nil {
			err = rctx.Err() // not git's refusal: interrupted, or out of time
		}
		if err != nil {
			return Result{}, fmt.Errorf("cannot take the container's commits, so none of them was taken and %s is unchanged: %w", strings.TrimPrefix(s.ref, "refs/heads/"), readError(ctx, rctx, c, err))
		}
		defer bundle.discard()
	}
	var files *copymode.Incoming
	if copied {
		fctx, cancel := context.WithTimeout(ctx, time.Duration(c.ExchangeTimeout))
		defer cancel()
		if files, err = s.copied().Receive(fctx, rt, ctr); err != nil {
			return Result{}, fmt.Errorf("cannot bring back the container's files: %w", readError(ctx, fctx, c, err))
		}
		defer files.Discard()
	}
	if lk == nil {
		if lk, err = s.r.Lock(ctx); err != nil {
			return Result{}, err
		}
		defer lk.Unlock()
		if host, err = s.HostTip(ctx); err != nil { // it may have moved meanwhile
			return Result{}, err
		}
	}
	var b Result
	if copied {
		b.Files, b.Conflicts, err = s.copied().Place(files)
		planted.Placed(ctx, s.r, s.identity, s.worktree, s.start, s.dir, files.Placed())
		if err != nil {
			s.report(b)
			return b, fmt.Errorf("cannot bring back the container's files: %w", err)
		}
	}
	if tip != "" {
		files, conflicts := b.Files, b.Conflicts
		b, err = s.takeIn(ctx, lk, bundle, host, tip)
		b.Files, b.Conflicts = files, conflicts
	}
	if err == nil && copied && b.To != "" {
		// The host's files the commits changed that hold what they do
		// are the container's too: its next change of them is none of
		// the host's.
		err = s.copied().Settle(ctx, s.r.Git, b.From, b.To)
	}
	s.report(b)
	return b, err
}

// takeIn applies what a sandbox sent: tip, with the commits the host
// lacks, checked, when there are any.
func (s *Sandbox) takeIn(ctx context.Context, lk *gitx.Locked, bundle *checked, host, tip string) (Result, error) {
	var res Result
	if bundle != nil {
		staging := "refs/apex/incoming/" + s.identity
		if err := bundle.take(ctx, lk, s.ref, staging); err != nil {
			return res, fmt.Errorf("cannot take the container's commits, so none of them was taken and %s is unchanged: %w", strings.TrimPrefix(s.ref, "refs/heads/"), err)
		}
		defer lk.DeleteRef(context.WithoutCancel(ctx), staging)
		fetched, err := s.r.Git.Commit(ctx, staging)
		if err != nil {
			return res, err
		}
		tip = fetched // what the bundle holds, whatever the first line said
	} else if _, err := s.r.Git.Commit(ctx, tip); err != nil {
		return res, fmt.Errorf("cannot take the container's commits: it names %s, which the repository does not have", repo.Short(tip))
	}
	if held, err := s.r.Git.IsAncestor(ctx, tip, host); err != nil || held {
		return res, errors.Join(err, s.saveSynced(host, tip)) // the host has it all
	}
	var err error
	var staged bool
	res.Why, staged, err = s.whyNotForward(ctx, lk, host, tip)
	if err != nil {
		return res, err
	}
	if res.Why == "" {
		res.From, res.To = host, tip
		return res, s.saveSynced(tip, tip)
	}
	// Commits kept only for the host's staged changes are not marked
	// taken in on a mounted engine: the next exec or sync tries the
	// fast-forward again, and it moves the branch once they are gone.
	private := tip
	if staged && !s.Copied() {
		private = s.loadSynced().private
	}
	// A commit kept aside already (a later exec or sync finds it again)
	// is not kept twice.
	kept, err := lk.RefsAt(ctx, "refs/apex/kept/"+s.identity, tip)
	if err != nil {
		return res, err
	}
	if len(kept) > 0 {
		res.Kept = kept[0]
		if !staged {
			res.Why = "the container's commits were kept aside before and still cannot move the branch; they stay"
		}
		return res, s.saveSynced(host, private)
	}
	res.Kept = fmt.Sprintf("refs/apex/kept/%s/%d", s.identity, time.Now().UnixMilli())
	if err := lk.SetRef(ctx, s.r.Git.CommonDir, res.Kept, tip, ""); err != nil {
		return res, err
	}
	return res, s.saveSynced(host, private)
}

// whyNotForward moves the host's ref (and its worktree's index) from
// host to tip when that is a fast-forward that adds no submodule and
// fits the host's staged changes; else it changes nothing and says why,
// and whether only the host's staged changes stood in the way.
func (s *Sandbox) whyNotForward(ctx context.Context, lk *gitx.Locked, host, tip string) (string, bool, error) {
	if ahead, err := s.r.Git.IsAncestor(ctx, host, tip); err != nil || !ahead {
		if last := s.loadSynced(); err == nil && last.host != host && last.private != "" {
			if behind, err := s.r.Git.IsAncestor(ctx, last.private, tip); err != nil || behind {
				return "the container committed on an older tip: the host's newer commits had not reached it; kept them", false, err
			}
		}
		return "the container's history is not a fast-forward of the host's (it was rewritten inside); kept it", false, err
	}
	if strays, err := s.unprotected(ctx, tip); err != nil || len(strays) > 0 {
		return fmt.Sprintf("the container's commits add submodules (%s), whose .git files it could point anywhere; kept them", strings.Join(strays, ", ")), false, err
	}
	if s.Copied() { // the host's files are its own: a change there may stand in the way
		if paths, err := s.copied().Conflicting(ctx, s.r.Git, host, tip); err != nil || len(paths) > 0 {
			return fmt.Sprintf("the host's changes to %s stand in the way of the container's commits (take the container's version, or commit yours, then fast-forward); kept them", strings.Join(paths, ", ")), false, err
		}
	}
	// The index first: when the host's staged changes stand in the way,
	// nothing has moved yet.
	if err := lk.MoveIndex(ctx, s.worktree, host, tip); err != nil {
		return fmt.Sprintf("staged changes in the host's worktree stand in the way of the container's commits (unstage them with `git restore --staged <paths>`, then run `git apex sync %s`); kept them", s.identity), true, nil
	}
	if err := lk.SetRef(ctx, s.worktree, s.ref, tip, host); err != nil {
		return "", false, errors.Join(err, lk.MoveIndex(ctx, s.worktree, tip, host))
	}
	return "", false, nil
}

// HostTip is the commit the host holds for a sandbox's ref.
func (s *Sandbox) HostTip(ctx context.Context) (string, error) {
	if s.ref == "HEAD" {
		return s.r.Git.WorktreeHead(ctx, s.worktree)
	}
	return s.r.Git.Commit(ctx, s.ref)
}

// SendOver moves the sandbox's ref to the host's tip when the host moved
// it (commits made on the host, a rebase there) and the container has
// not moved it since the last exchange; a copied container is given the
// objects and files too (copymode.Worktree.HandOver). It costs a git process and a file
// read when nothing moved. When the host's commits add submodules its
// container was not made with, a mounted worktree's is refused (exit 3:
// their directories are writable inside, see Submodules), a copied one's
// an error: either way nothing is sent.
func (s *Sandbox) SendOver(ctx context.Context, rt container.Runtime, ctr string) error {
	last := s.loadSynced()
	host, err := s.HostTip(ctx)
	if err != nil || host == last.host {
		return err
	}
	copied := s.Copied()
	if strays, err := s.unprotected(ctx, host); err != nil || len(strays) > 0 {
		if err != nil {
			return err
		}
		if !copied { // their directories are in the mounted worktree, writable inside
			return exitcode.New(exitcode.Refused, "the host's commits add submodules (%s) whose directories its container could write, and a plain `git status` on the host would enter a .git it planted there; it runs nothing until it is made again: remove the container with `docker rm -f %s`, and the next exec makes it again",
				strings.Join(strays, ", "), s.name)
		}
		return fmt.Errorf("the host's commits add submodules (%s) whose directories its container could write; they are not given to it until it is made again: remove the container with `docker rm -f %s`, and the next exec makes it again",
			strings.Join(strays, ", "), s.name)
	}
	if !copied && !s.Unchanged() {
		return nil // the container moved it too: bringBack decides
	}
	c := policyOf(s.r).Container
	rctx, cancel := context.WithTimeout(ctx, time.Duration(c.ExchangeTimeout))
	defer cancel()
	if copied {
		moved, err := s.copied().HandOver(rctx, rt, ctr, s.r.Git, copymode.HandOver{Ref: s.ref, From: last.private, To: host})
		if err != nil || !moved {
			if err != nil {
				err = fmt.Errorf("cannot give the container the host's commits: %w", readError(ctx, rctx, c, err))
			}
			return err
		}
		return s.saveSynced(host, host)
	}
	var stderr bytes.Buffer
	code, err := rt.Exec(rctx, ctr, container.ExecSpec{Cmd: []string{"sh", "-c", importScript, "import", s.ref, host, last.private},
		WorkDir: s.worktree, Env: s.gitEnv(), Stdout: io.Discard, Stderr: &stderr})
	switch {
	case err != nil:
		return fmt.Errorf("cannot give the container the host's commits: %w", readError(ctx, rctx, c, err))
	case code == 3:
		return nil
	case code != 0:
		return fmt.Errorf("cannot give the container the host's commits: exit status %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	return s.saveSynced(host, host)
}

// policyOf is r's policy, or the built-in one when its .apex.toml cannot
// be read: an exchange is never held up by that.
func policyOf(r *repo.Repo) *policy.Policy {
	if pol, err := r.Policy(); err == nil {
		return pol
	}
	return policy.Default()
}

// limited is w taking in at most the policy's max_transfer, or the space
// free on the disk of the sandbox (where everything from its container
// is kept before it is taken in) when that is less.
func (s *Sandbox) limited(w io.Writer, c policy.Container) io.Writer {
	var st syscall.Statfs_t
	if syscall.Statfs(s.dir, &st) == nil {
		if free := int64(st.Bavail) * int64(st.Bsize); free < int64(c.MaxTransfer) {
			return container.Limit(w, free, s.dir)
		}
	}
	return container.Limit(w, int64(c.MaxTransfer), "")
}

// readError is err, from a read from a container under rctx (ctx with
// the policy's exchange_timeout c), or what the timeout ran out on.
func readError(ctx, rctx context.Context, c policy.Container, err error) error {
	if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("it did not finish within %s ([container].exchange_timeout; raise it in .apex.toml if that is too short)", time.Duration(c.ExchangeTimeout))
	}
	return err
}

// gitEnv is the environment of git-apex's own git commands inside a
// container: its private git directory, whatever the container did.
func (s *Sandbox) gitEnv() []string {
	return []string{"GIT_DIR=" + gitDirInside, "GIT_WORK_TREE=" + s.worktree, "LC_ALL=C"}
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

// report says on stderr what an exchange kept aside.
func (s *Sandbox) report(b Result) {
	for _, c := range b.Conflicts {
		s.r.Warnf("%s: %s", s.identity, c)
	}
	if b.Kept == "" {
		return
	}
	what := strings.TrimPrefix(s.ref, "refs/heads/")
	s.r.Warnf("%s: %s as %s; %s is unchanged: compare with `git log --oneline --graph %s %s`", s.identity, b.Why, b.Kept, what, what, b.Kept)
}
