package gitx

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMoveIndexOverRewrittenFiles plays what a container does in a
// mounted worktree: it rewrites tracked files (edit, mode change,
// deletion) and commits them in a git directory of its own; the host's
// index, whose stat data no longer matches those files, moves to the
// commit, while what the host staged on another path stays staged. A
// path staged otherwise than both commits have it stops the move.
func TestMoveIndexOverRewrittenFiles(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	for name, content := range map[string]string{"edit.txt": "a\n", "tool.sh": "echo\n", "gone.txt": "x\n", "other.txt": "o\n"} {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "files")
	from := git(t, dir, "rev-parse", "HEAD")
	// The other side's commit, made through an index of its own.
	os.WriteFile(filepath.Join(dir, "edit.txt"), []byte("a\nb\n"), 0o644)
	os.Chmod(filepath.Join(dir, "tool.sh"), 0o755)
	os.Remove(filepath.Join(dir, "gone.txt"))
	index := filepath.Join(t.TempDir(), "index")
	t.Setenv("GIT_INDEX_FILE", index)
	git(t, dir, "read-tree", from)
	git(t, dir, "add", "-A", "edit.txt", "tool.sh", "gone.txt")
	tree := git(t, dir, "write-tree")
	to := git(t, dir, "commit-tree", tree, "-p", from, "-m", "inside")
	os.Unsetenv("GIT_INDEX_FILE")
	// The host staged another path.
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("o\nstaged\n"), 0o644)
	git(t, dir, "add", "other.txt")

	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	if err := lk.MoveIndex(ctx, dir, from, to); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-ref", "HEAD", to)
	if got := git(t, dir, "status", "--porcelain"); got != "M  other.txt" {
		t.Errorf("status after the move = %q, want only the host's staged other.txt", got)
	}

	// A path staged otherwise than both sides have it: refused, index unchanged.
	git(t, dir, "commit", "-qm", "host")
	base := git(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "edit.txt"), []byte("mine\n"), 0o644)
	git(t, dir, "add", "edit.txt")
	staged := git(t, dir, "write-tree")
	t.Setenv("GIT_INDEX_FILE", index)
	git(t, dir, "read-tree", base)
	os.WriteFile(filepath.Join(dir, "edit.txt"), []byte("theirs\n"), 0o644)
	git(t, dir, "add", "edit.txt")
	theirs := git(t, dir, "commit-tree", git(t, dir, "write-tree"), "-p", base, "-m", "theirs")
	os.Unsetenv("GIT_INDEX_FILE")
	if err := lk.MoveIndex(ctx, dir, base, theirs); err == nil {
		t.Error("MoveIndex over a path staged otherwise succeeded")
	}
	if got := git(t, dir, "write-tree"); got != staged {
		t.Errorf("the refused move changed the index: %s, want %s", got, staged)
	}
}

func TestAuthor(t *testing.T) {
	if os.Getenv("GIT_AUTHOR_NAME") != "" || os.Getenv("GIT_AUTHOR_EMAIL") != "" {
		t.Skip("GIT_AUTHOR_NAME or GIT_AUTHOR_EMAIL is set: it would win over the config read here")
	}
	dir := newRepo(t)
	git(t, dir, "config", "user.name", `A "Quoted" \ Name`)
	git(t, dir, "config", "user.email", "a@example.com")
	name, email, ok := Author(context.Background(), dir)
	if !ok || name != `A "Quoted" \ Name` || email != "a@example.com" {
		t.Errorf("Author = %q %q %v", name, email, ok)
	}
}
