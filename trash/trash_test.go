package trash

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/gitx/gittest"
)

// TestRecordAndPut keeps a linked worktree's edited tracked file, staged
// new file, untracked file and deleted file, removes the worktree, and
// puts them all back in a new one, staged state included; ignored files
// are not kept, and a clean worktree records nothing.
func TestRecordAndPut(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "tracked.txt"), "v1\n")
	write(filepath.Join(dir, "gone.txt"), "bye\n")
	write(filepath.Join(dir, ".gitignore"), "*.log\n")
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "files")
	wt := filepath.Join(filepath.Dir(dir), "wt")
	gittest.Git(t, dir, "worktree", "add", "-q", "-b", "topic", wt)

	r, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	what := Entry{Identity: "feature-topic", Branch: "topic", Base: "main", Mode: "worktree", Path: wt}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if e, err := Record(ctx, lk, what, Options{}, now); err != nil || e != nil {
		t.Fatalf("clean worktree: Record = %+v, %v; want nothing", e, err)
	}

	write(filepath.Join(wt, "tracked.txt"), "v2\n")
	write(filepath.Join(wt, "staged.txt"), "staged\n")
	gittest.Git(t, wt, "add", "staged.txt")
	write(filepath.Join(wt, "untracked.txt"), "loose\n")
	write(filepath.Join(wt, "debug.log"), "ignored\n")
	os.Remove(filepath.Join(wt, "gone.txt"))
	gittest.Git(t, "", "init", "-q", filepath.Join(wt, "nested")) // no commit: git add would fail on it
	tip := gittest.Git(t, wt, "rev-parse", "HEAD")
	e, err := Record(ctx, lk, what, Options{}, now)
	if err != nil || e == nil {
		t.Fatalf("Record = %+v, %v", e, err)
	}
	if e.Ref != "refs/apex/trash/feature-topic/1772366400000" || e.Head != tip || e.Files != 4 || len(e.NotKept) != 1 || e.NotKept[0] != "nested/" {
		t.Errorf("Record = %+v; want its ref by identity and time, head %s, 4 files, the nested repository not kept", e, tip)
	}
	if !slices.Equal(e.IgnoredNotKept, []string{"debug.log"}) {
		t.Errorf("Record's ignored files not kept = %q; want debug.log", e.IgnoredNotKept)
	}
	if got := gittest.Git(t, wt, "diff", "--cached", "--name-only"); got != "staged.txt" {
		t.Errorf("Record changed the worktree's index: staged %q", got)
	}

	gittest.Git(t, dir, "worktree", "remove", "--force", wt)
	list, err := List(ctx, lk, "feature-topic")
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	got := list[0]
	if got.Commit != e.Commit || got.Branch != "topic" || got.Base != "main" || got.Mode != "worktree" || got.Path != wt ||
		got.Head != tip || got.Files != 4 || !got.At.Equal(now) && e.At.Equal(now) {
		t.Errorf("List = %+v; want %+v", got, *e)
	}
	if other, _ := List(ctx, lk, "feature-top"); len(other) != 0 {
		t.Errorf("List of another identity = %+v", other)
	}

	gittest.Git(t, dir, "worktree", "add", "-q", wt, "topic")
	if err := Put(ctx, lk, wt, got); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"tracked.txt": "v2\n", "staged.txt": "staged\n", "untracked.txt": "loose\n"} {
		if b, err := os.ReadFile(filepath.Join(wt, name)); err != nil || string(b) != want {
			t.Errorf("%s after Put: %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(wt, "debug.log")); err == nil {
		t.Error("an ignored file came back: it was never kept")
	}
	if _, err := os.Stat(filepath.Join(wt, "gone.txt")); err == nil {
		t.Error("a deleted file came back")
	}
	status := gittest.Git(t, wt, "status", "--porcelain")
	want := "D gone.txt\nA  staged.txt\n M tracked.txt\n?? untracked.txt" // the first line's space trimmed
	if status != want {
		t.Errorf("status after Put:\n%s\nwant\n%s", status, want)
	}

	if dropped, err := Expire(ctx, lk, now); err != nil || len(dropped) != 0 {
		t.Errorf("Expire before it was made = %+v, %v", dropped, err)
	}
	if dropped, err := Expire(ctx, lk, now.Add(time.Millisecond)); err != nil || len(dropped) != 1 {
		t.Errorf("Expire after = %+v, %v", dropped, err)
	}
	if list, _ := List(ctx, lk, ""); len(list) != 0 {
		t.Errorf("after Expire: %+v", list)
	}
}

// TestRecordRacyEdit keeps an edit git can tell only by content: a
// tracked file rewritten, at the same size, in the second its worktree's
// index was written (by a checkout, say), with Record run in a later
// second (gittest.RacyEdit). Record's copy of the index must leave git
// comparing the file's content, as the index itself does.
func TestRecordRacyEdit(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	file := filepath.Join(dir, "tracked.txt")
	if err := os.WriteFile(file, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	wt := filepath.Join(filepath.Dir(dir), "wt")
	gittest.Git(t, dir, "worktree", "add", "-q", "-b", "topic", wt)
	r, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()

	gittest.RacyEdit(t, wt, "tracked.txt", "two\n")
	e, err := Record(ctx, lk, Entry{Identity: "feature-topic", Mode: "worktree", Path: wt}, Options{}, time.Now())
	if err != nil || e == nil {
		t.Fatalf("Record = %+v, %v; want the edit kept", e, err)
	}
	if got := gittest.Git(t, wt, "show", e.Commit+":tracked.txt"); got != "two" || e.Files != 1 {
		t.Errorf("Record kept tracked.txt as %q (%d files); want the edit, two", got, e.Files)
	}
}

// TestRecordKeepIgnored keeps the ignored files a keep_ignored pattern
// matches, in a worktree otherwise clean, at any depth and inside an
// ignored directory; the other ignored files are named, a directory
// ignored whole once (when anything in it was not kept), and one over
// MaxFile is named as too big.
func TestRecordKeepIgnored(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".env\n*.local\n*.log\ncache/\nconfig/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "ignore")
	wt := filepath.Join(filepath.Dir(dir), "wt")
	gittest.Git(t, dir, "worktree", "add", "-q", "-b", "topic", wt)
	files := map[string]int64{".env": 5, "sub/.env": 5, "config/db.local": 5, "config/other": 5, "debug.log": 5, "cache/blob": 5, "huge.local": MaxFile + 1}
	for name, size := range files {
		path := filepath.Join(wt, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size); err != nil { // sparse: nothing is written
			t.Fatal(err)
		}
	}
	r, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	what := Entry{Identity: "feature-topic", Mode: "worktree", Path: wt}
	if e, err := Record(ctx, lk, what, Options{}, time.Now()); err != nil || e != nil {
		t.Fatalf("no keep_ignored: Record = %+v, %v; want nothing (the tree is clean)", e, err)
	}
	e, err := Record(ctx, lk, what, Options{KeepIgnored: []string{".env", "*.local"}}, time.Now())
	if err != nil || e == nil {
		t.Fatalf("Record = %+v, %v; want the matching ignored files kept", e, err)
	}
	kept := gittest.Git(t, wt, "ls-tree", "-r", "--name-only", e.Commit)
	if want := ".env\n.gitignore\nconfig/db.local\nsub/.env"; kept != want {
		t.Errorf("Record kept:\n%s\nwant\n%s", kept, want)
	}
	if e.Files != 3 || !slices.Equal(e.IgnoredNotKept, []string{"cache/", "config/", "debug.log"}) ||
		len(e.TooBig) != 1 || e.TooBig[0].Path != "huge.local" {
		t.Errorf("Record = %+v; want 3 files, cache/, config/ (its other) and debug.log not kept, huge.local too big", e)
	}
}

// TestRecordCommits: a clean worktree whose HEAD holds commits nothing
// else does makes an entry that keeps them: a detached HEAD's, and a
// branch's when the discard deletes it (DeletesBranch); commits the
// worktree was made at (Made), or that a branch holds, make none. List
// reads the count back.
func TestRecordCommits(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "base")
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	wt := filepath.Join(filepath.Dir(dir), "wt")
	gittest.Git(t, dir, "worktree", "add", "-q", "-b", "topic", wt)
	gittest.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "on topic")
	r, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	what := Entry{Identity: "feature-topic", Branch: "topic", Mode: "worktree", Path: wt}
	if e, err := Record(ctx, lk, what, Options{}, time.Now()); err != nil || e != nil {
		t.Fatalf("clean worktree on its branch, kept: Record = %+v, %v; want nothing", e, err)
	}
	e, err := Record(ctx, lk, what, Options{DeletesBranch: true}, time.Now())
	if err != nil || e == nil || e.Commits != 1 || e.Files != 0 {
		t.Fatalf("branch deleted: Record = %+v, %v; want 1 commit, no file", e, err)
	}
	if list, err := List(ctx, lk, "feature-topic"); err != nil || len(list) != 1 || list[0].Commits != 1 {
		t.Errorf("List = %+v, %v; want the entry with 1 commit", list, err)
	}

	gittest.Git(t, wt, "switch", "-q", "--detach", base)
	gittest.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "detached 1")
	gittest.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "detached 2")
	detached := Entry{Identity: "task-slot-1", Mode: "worktree", Path: wt}
	if e, err := Record(ctx, lk, detached, Options{}, time.Now()); err != nil || e == nil || e.Commits != 2 {
		t.Errorf("detached HEAD: Record = %+v, %v; want 2 commits", e, err)
	}
	made := gittest.Git(t, wt, "rev-parse", "HEAD~1")
	if e, err := Record(ctx, lk, detached, Options{Made: made}, time.Now()); err != nil || e == nil || e.Commits != 1 {
		t.Errorf("detached HEAD made at its parent: Record = %+v, %v; want 1 commit", e, err)
	}
	gittest.Git(t, wt, "switch", "-q", "--detach", base)
	if e, err := Record(ctx, lk, detached, Options{}, time.Now()); err != nil || e != nil {
		t.Errorf("detached HEAD at a commit main holds: Record = %+v, %v; want nothing", e, err)
	}
}
