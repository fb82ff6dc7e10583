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

// paths are the traps' paths.
func paths(traps []Trap) []string {
	var out []string
	for _, t := range traps {
		out = append(out, t.Path)
	}
	return out
}

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
	if got := paths(Find(dir)); !slices.Equal(got, want) {
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
	if e, ok := err.(*Error); !ok || !slices.Equal(paths(e.Traps), []string{filepath.Join(dir, "sub", ".gitignore")}) {
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
	if got := paths(Find(dir)); !slices.Equal(got, []string{filepath.Join(dir, "doc", ".gitignore")}) {
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
	if e, ok := trapped().(*Error); !ok || !slices.Equal(paths(e.Traps), []string{filepath.Join(dir, "late", ".gitignore")}) {
		t.Fatalf("trapped() = %v", e)
	}
}

// TestFindClosedDir: a directory the user may enter but not list (the
// walk cannot see the pipe .gitattributes git opens there by name) is a
// trap; Remove opens it, then removes the pipe, leaving the files. One
// the user cannot enter is none: git cannot reach into it either.
func TestFindClosedDir(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root lists every directory")
	}
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "a", ".gitattributes"))
	os.WriteFile(filepath.Join(dir, "a", "f"), []byte("work\n"), 0o644)
	mkfifo(t, filepath.Join(dir, "shut", ".gitignore"))
	os.Chmod(filepath.Join(dir, "a"), 0o111)
	os.Chmod(filepath.Join(dir, "shut"), 0)
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "shut"), 0o755) })
	found := Find(dir)
	if len(found) != 1 || found[0].Path != filepath.Join(dir, "a") || found[0].Why != Closed {
		t.Fatalf("Find = %v, want a closed", found)
	}
	if _, err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if got := Find(dir); len(got) > 0 {
		t.Errorf("Remove left %v", got)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a", "f")); err != nil || string(data) != "work\n" {
		t.Errorf("the work beside the pipe: %q, %v", data, err)
	}
}

// TestFindGitfile: a nested .git file, or link, sending git to a
// directory whose HEAD is a named pipe is a trap, wherever that directory
// is and whatever its name; Remove deletes the .git file, not the pipe
// it names (which may be anywhere). A .git file naming a plain git
// directory is none.
func TestFindGitfile(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "d", "HEAD"))
	os.MkdirAll(filepath.Join(dir, "u"), 0o755)
	os.WriteFile(filepath.Join(dir, "u", ".git"), []byte("gitdir: ../d\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "v"), 0o755)
	os.Symlink("../d", filepath.Join(dir, "v", ".git"))
	os.MkdirAll(filepath.Join(dir, "w", ".git"), 0o755)
	os.Symlink("../../d/HEAD", filepath.Join(dir, "w", ".git", "HEAD"))
	os.MkdirAll(filepath.Join(dir, "fine", "gd"), 0o755)
	os.WriteFile(filepath.Join(dir, "fine", "gd", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "fine", ".git"), []byte("gitdir: gd\n"), 0o644)
	want := []string{filepath.Join(dir, "u", ".git"), filepath.Join(dir, "v", ".git"), filepath.Join(dir, "w", ".git")}
	found := Find(dir)
	if got := paths(found); !slices.Equal(got, want) {
		t.Fatalf("Find = %v, want %v", found, want)
	}
	if !strings.Contains(found[0].Why, `naming "../d", whose HEAD is a named pipe`) {
		t.Errorf("Why = %q", found[0].Why)
	}
	if _, err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if got := Find(dir); len(got) > 0 {
		t.Errorf("Remove left %v", got)
	}
}

// TestErrorQuotes: the paths the message names are the container's, and
// are quoted: a terminal's control sequences in one reach no terminal.
func TestErrorQuotes(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "x\x1b[2K\rall clean\x1b]52;c;cm0K\a", ".gitignore"))
	msg := In(dir).Error()
	if strings.ContainsAny(msg, "\x1b\r\a") || !strings.Contains(msg, `"x\x1b[2K\rall clean`) {
		t.Fatalf("the message carries the name raw: %q", msg)
	}
}
