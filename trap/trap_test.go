package trap

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFind finds named pipes where git opens its own files, and only
// there: a regular .gitignore and a pipe of another name are no traps.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("x\n"), 0o644)
	mkfifo(t, filepath.Join(dir, "tmp", "server.pipe"))
	if AtTop(dir) || len(Find(dir)) != 0 {
		t.Fatalf("a clean worktree has traps: %v", Find(dir))
	}
	mkfifo(t, filepath.Join(dir, "a", "b", ".gitattributes"))
	mkfifo(t, filepath.Join(dir, "nested", ".git", "HEAD"))
	if AtTop(dir) {
		t.Fatal("AtTop found a trap below the top")
	}
	want := []string{filepath.Join(dir, "a", "b", ".gitattributes"), filepath.Join(dir, "nested", ".git", "HEAD")}
	if got := Find(dir); !slices.Equal(got, want) {
		t.Fatalf("Find = %v, want %v", got, want)
	}
	os.Remove(filepath.Join(dir, ".gitignore"))
	mkfifo(t, filepath.Join(dir, ".gitignore"))
	if !AtTop(dir) {
		t.Fatal("AtTop missed .gitignore")
	}
}

// TestWatch: a trap at the top stops the command before it runs; one
// below, once it has run for Wait; off, nothing is watched.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "sub", ".gitignore"))
	ctx, trapped := Watch(context.Background(), dir, true)
	if ctx.Err() != nil {
		t.Fatal("a trap below the top stopped the command before it ran")
	}
	<-ctx.Done() // a command would wait here for ever, on the pipe
	err := trapped()
	if e, ok := err.(*Error); !ok || !slices.Equal(e.Traps, []string{filepath.Join(dir, "sub", ".gitignore")}) {
		t.Fatalf("trapped() = %v", err)
	}
	mkfifo(t, filepath.Join(dir, ".gitmodules"))
	if ctx, trapped := Watch(context.Background(), dir, true); ctx.Err() == nil || trapped() == nil {
		t.Fatal("a trap at the top did not stop the command at once")
	}
	if ctx, trapped := Watch(context.Background(), dir, false); ctx.Err() != nil || trapped() != nil {
		t.Fatal("watching nothing stopped the command")
	}
}

// TestRemove: the message names the git-apex command that removes the
// traps, never an rm to paste (a container can turn a path printed into
// one leading elsewhere before it runs); Remove deletes each, whatever its
// name, and leaves the files beside them.
func TestRemove(t *testing.T) {
	dir := t.TempDir()
	evil := filepath.Join(dir, "x; touch PWNED #")
	mkfifo(t, filepath.Join(evil, ".gitignore"))
	mkfifo(t, filepath.Join(dir, ".gitattributes"))
	if err := os.WriteFile(filepath.Join(evil, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	msg := In(dir).Error()
	if !strings.Contains(msg, "`git apex doctor --fix` removes them") || strings.Contains(msg, "rm ") {
		t.Fatalf("the message %q does not name doctor --fix, or holds an rm", msg)
	}
	removed, err := Remove(dir)
	if err != nil || len(removed) != 2 {
		t.Fatalf("Remove = %v, %v", removed, err)
	}
	if got := Find(dir); len(got) > 0 {
		t.Errorf("left %v", got)
	}
	if _, err := os.Stat(filepath.Join(evil, "keep")); err != nil {
		t.Errorf("the file beside a trap: %v", err)
	}
}

// TestBig: a .gitignore-style file over 1 MiB is a trap, at the top and
// below; one of 1 MiB, or a big file of another name, is not.
func TestBig(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int64{"doc/.gitignore": 2 << 30, ".gitmodules": maxSize, "data.bin": 2 << 30} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
	}
	if AtTop(dir) {
		t.Error("a .gitmodules of 1 MiB at the top is a trap")
	}
	if got := Find(dir); !slices.Equal(got, []string{filepath.Join(dir, "doc", ".gitignore")}) {
		t.Errorf("Find = %v, want doc/.gitignore", got)
	}
	if err := os.Truncate(filepath.Join(dir, ".gitmodules"), maxSize+1); err != nil {
		t.Fatal(err)
	}
	if !AtTop(dir) {
		t.Error("a .gitmodules over 1 MiB at the top is no trap")
	}
}

// TestWatchLooksAgain: a trap planted while the command runs, after the
// first look found none, stops it at a later look.
func TestWatchLooksAgain(t *testing.T) {
	dir := t.TempDir()
	ctx, trapped := Watch(context.Background(), dir, true)
	time.Sleep(Wait + Wait/2) // most likely past the first look; if not, the first finds it
	mkfifo(t, filepath.Join(dir, "late", ".gitignore"))
	select {
	case <-ctx.Done():
	case <-time.After(2 * lookEvery):
		t.Fatal("a trap planted after the first look did not stop the command")
	}
	if e, ok := trapped().(*Error); !ok || !slices.Equal(e.Traps, []string{filepath.Join(dir, "late", ".gitignore")}) {
		t.Fatalf("trapped() = %v", e)
	}
}
