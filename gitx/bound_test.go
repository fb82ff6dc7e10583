package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBound: git in a bound worktree that runs past the bound is stopped
// with a TimeoutError naming the env, and a later command there fails
// at once; the repository's own commands, and another worktree's, are
// not bound.
func TestBound(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r, _ := Open(ctx, dir)
	wt := filepath.Join(filepath.Dir(dir), "wt")
	lk, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	if err := lk.AddWorktree(ctx, wt, "b", true, r.Head); err != nil {
		t.Fatal(err)
	}
	// git's pattern matching backtracks for years on this pair.
	os.WriteFile(filepath.Join(wt, ".gitignore"), []byte("*a*a*a*a*a*a*a*a*a*a*b\n"), 0o644)
	os.WriteFile(filepath.Join(wt, strings.Repeat("a", 100)+"0"), nil, 0o644)

	bound := Bound(ctx, wt, "feature-x", 500*time.Millisecond)
	_, err = r.Status(bound, wt, StatusOptions{Contained: true})
	var timeout *TimeoutError
	if !errors.As(err, &timeout) || timeout.Identity != "feature-x" || !strings.Contains(err.Error(), "`git status`") {
		t.Fatalf("Status = %v, want a TimeoutError", err)
	}
	if _, err := r.WorktreeHead(bound, wt); !errors.As(err, &timeout) {
		t.Errorf("a later command in the worktree = %v, want a TimeoutError at once", err)
	}
	if _, err := r.WorktreeHead(bound, dir); err != nil {
		t.Errorf("the main checkout's command was bound: %v", err)
	}
}
