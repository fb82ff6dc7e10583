package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx/gittest"
)

var (
	git     = gittest.Git
	newRepo = gittest.NewRepo
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	r, err := Open(ctx, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Toplevel != dir || r.CommonDir != filepath.Join(dir, ".git") || len(r.Head) != 40 {
		t.Errorf("Open = %+v", r)
	}

	empty := filepath.Join(t.TempDir(), "empty")
	git(t, "", "init", "-q", empty)
	r, err = Open(ctx, empty)
	if err != nil || r.Head != "" || exitcode.Of(r.RequireCommits()) != exitcode.Usage {
		t.Errorf("empty repo: %+v, %v", r, err)
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	git(t, "", "init", "-q", "--bare", bare)
	r, err = Open(ctx, bare)
	if err != nil || !r.Bare || r.Head != "" || exitcode.Of(r.RequireCommits()) != exitcode.Usage {
		t.Errorf("empty bare repo: %+v, %v", r, err)
	}
	for name, dir := range map[string]string{"outside": t.TempDir(), "git dir": filepath.Join(dir, ".git")} {
		if _, err := Open(ctx, dir); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%s: got %v, want a usage error", name, err)
		}
	}
}

// A bare clone with a worktree opens alike from the worktree and from
// the bare directory: no main checkout, named without .git, its HEAD's
// branch first in the worktree list (and checked out nowhere), and its
// committed files readable.
func TestOpenBare(t *testing.T) {
	ctx := context.Background()
	src := newRepo(t)
	os.WriteFile(filepath.Join(src, "p.toml"), []byte("x = 1\n"), 0o644)
	git(t, src, "add", "p.toml")
	git(t, src, "commit", "-q", "-m", "p")
	parent := t.TempDir()
	bare, main := filepath.Join(parent, "proj.git"), filepath.Join(parent, "proj-main")
	git(t, "", "clone", "-q", "--bare", src, bare)
	branch := strings.TrimSpace(git(t, bare, "symbolic-ref", "--short", "HEAD"))
	git(t, bare, "worktree", "add", "-q", main, branch)
	for _, dir := range []string{bare, main} {
		r, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Bare || r.Name != "proj" || r.MainRoot() != bare || len(r.Head) != 40 {
			t.Errorf("Open(%s) = %+v, MainRoot %s", dir, r, r.MainRoot())
		}
		wts, err := r.Worktrees(ctx)
		if err != nil || len(wts) != 2 || !wts[0].Bare || wts[0].Branch != branch || wts[0].Head != r.Head {
			t.Errorf("Worktrees from %s = %+v, %v", dir, wts, err)
		}
		if wt, ok := WorktreeOnBranch(wts, branch); !ok || wt.Path != main {
			t.Errorf("WorktreeOnBranch(%s) = %+v, %v; want the worktree", branch, wt, ok)
		}
		text, found, err := Committed(ctx, r.CommonDir, "HEAD:p.toml", 100)
		if text != "x = 1\n" || !found || err != nil {
			t.Errorf("Committed(HEAD:p.toml) = %q, %v, %v", text, found, err)
		}
		if _, found, err := Committed(ctx, r.CommonDir, "HEAD:none", 100); found || err != nil {
			t.Errorf("Committed(HEAD:none) = %v, %v; want not found", found, err)
		}
		if _, _, err := Committed(ctx, r.CommonDir, "HEAD:p.toml", 3); err == nil {
			t.Errorf("Committed over its limit: no error")
		}
	}
}

func TestGitErrorIsTyped(t *testing.T) {
	r, err := Open(context.Background(), newRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.runIn(context.Background(), "", "rev-parse", "--verify", "nope")
	gerr, ok := err.(*Error)
	if !ok || gerr.Status != 128 || !strings.Contains(gerr.Stderr, "fatal") || exitcode.Of(err) != exitcode.Git {
		t.Errorf("got %#v", err)
	}
}

func TestUnheldAndStatus(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r, _ := Open(ctx, dir)
	git(t, dir, "switch", "-q", "-c", "topic")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	if n, err := r.Unheld(ctx, "refs/heads/topic", "topic"); err != nil || n != 2 {
		t.Errorf("Unheld(topic except topic) = %d, %v; want 2", n, err)
	}
	if n, _ := r.Unheld(ctx, "refs/heads/topic", ""); n != 0 {
		t.Errorf("Unheld(topic) = %d; want 0, topic holds itself", n)
	}
	git(t, dir, "branch", "copy", "topic")
	if n, _ := r.Unheld(ctx, "refs/heads/topic", "topic"); n != 0 {
		t.Errorf("Unheld with a copy branch = %d; want 0", n)
	}

	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), []byte("b"), 0o644)
	git(t, dir, "add", "a")
	st, err := r.Status(ctx, dir, StatusOptions{})
	if err != nil || st.Changes != (Changes{Staged: 1, Untracked: 1}) {
		t.Errorf("Status = %+v, %v", st, err)
	}
	git(t, dir, "commit", "-q", "-m", "a")
	git(t, dir, "mv", "a", "renamed")
	os.WriteFile(filepath.Join(dir, "renamed"), []byte("changed"), 0o644)
	if st, _ := r.Status(ctx, dir, StatusOptions{}); st.Changes != (Changes{Staged: 1, Modified: 1, Untracked: 1}) {
		t.Errorf("Status after rename = %+v", st)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.o\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "x.o"), []byte("x"), 0o644)
	if st, _ := r.Status(ctx, dir, StatusOptions{}); st.Ignored != 0 {
		t.Errorf("Status without Ignored counted %d ignored", st.Ignored)
	}
	if st, _ := r.Status(ctx, dir, StatusOptions{Ignored: true}); st.Ignored != 1 {
		t.Errorf("Status with Ignored = %+v; want 1 ignored", st)
	}
}

func TestWorktreesAndRefs(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r, _ := Open(ctx, dir)
	wtPath := filepath.Join(filepath.Dir(dir), "wt with space")
	lk, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.AddWorktree(ctx, wtPath, "b", true, r.Head); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "worktree", "lock", "--reason", "usb disk", wtPath)
	lk.Unlock()
	list, err := r.Worktrees(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("Worktrees = %+v, %v", list, err)
	}
	wt, ok := FindWorktree(list, wtPath)
	if !ok || wt.Branch != "b" || !wt.Locked || wt.LockReason != "usb disk" || wt.Head != r.Head {
		t.Errorf("worktree = %+v", wt)
	}
	if main, _ := WorktreeOnBranch(list, "main"); main.Path != dir {
		t.Errorf("main checkout = %+v", main)
	}
	refs, err := r.Refs(ctx, "refs/heads/b", "refs/heads/nope", "refs/heads/ma")
	if err != nil || len(refs) != 1 || refs["refs/heads/b"].Hash != r.Head {
		t.Errorf("Refs = %v, %v", refs, err)
	}
}

// TestLockSerializesParallelAdds runs 16 worktree adds at once through the
// lock; unlocked, git races on its admin files here.
func TestLockSerializesParallelAdds(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r, _ := Open(ctx, dir)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lk, err := r.Lock(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer lk.Unlock()
			name := "b" + string(rune('a'+i))
			errs <- lk.AddWorktree(ctx, filepath.Join(filepath.Dir(dir), name), name, true, r.Head)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if list, _ := r.Worktrees(ctx); len(list) != 17 {
		t.Errorf("%d worktrees, want 17", len(list))
	}
}

// TestMainRootAgreesWithGit compares MainRoot with the first entry of
// `git worktree list`, from the main checkout, a linked worktree and a
// path through a symlink.
func TestMainRootAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	linked := filepath.Join(t.TempDir(), "linked")
	git(t, dir, "worktree", "add", "-q", linked)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{dir, linked, link} {
		r, err := Open(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		list, err := r.Worktrees(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.MainRoot() != list[0].Path {
			t.Errorf("from %s: MainRoot = %s, git says %s", from, r.MainRoot(), list[0].Path)
		}
	}
}

func TestStatusAgainst(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r, _ := Open(ctx, dir)
	git(t, dir, "switch", "-q", "-c", "topic")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	git(t, dir, "switch", "-q", "main")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "base moved")
	git(t, dir, "switch", "-q", "topic")
	os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644)
	st, err := r.Status(ctx, dir, StatusOptions{Branch: "topic", Base: "main", BaseIsLocal: true})
	if err != nil || !st.Counted || st.Ahead != 2 || st.Behind != 1 || st.Changes != (Changes{Untracked: 1}) {
		t.Errorf("StatusAgainst = %+v, %v", st, err)
	}
	if head := git(t, dir, "rev-parse", "HEAD"); st.Head != head {
		t.Errorf("Status's Head = %q, want %s", st.Head, head)
	}
	if out := git(t, dir, "config", "--list", "--local"); strings.Contains(out, "branch.topic") {
		t.Errorf("the base was written to the config:\n%s", out)
	}
	git(t, dir, "add", "new")
	git(t, dir, "mv", "new", "renamed")
	if st, _ := r.Status(ctx, dir, StatusOptions{Branch: "topic", Base: "main", BaseIsLocal: true}); st.Changes != (Changes{Staged: 1}) {
		t.Errorf("after a staged rename: %+v", st)
	}
}
