package isolation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-apex/git-apex/gitx/gittest"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
)

var git = gittest.Git

// TestStartInterruptedLeavesNothing cancels a start while git is checking
// out (a post-checkout hook holds it there), as Ctrl-C does, and checks
// that no branch, directory, worktree entry or row is left.
func TestStartInterruptedLeavesNothing(t *testing.T) {
	dir := gittest.NewRepo(t)
	marker := filepath.Join(t.TempDir(), "checking-out")
	hook := "#!/bin/sh\ntouch '" + marker + "'\nsleep 300\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "post-checkout"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := repo.Open(ctx, dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := New(r)
	go func() {
		for !hostpath.Exists(marker) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	id, _ := policy.NewIdentity("feature", "x")
	done := make(chan error)
	go func() {
		_, err := m.Start(ctx, StartRequest{Identity: id})
		done <- err
	}()
	// Not a timing test: the margin only tells a hang (waiting for the
	// hook's 300 s sleep) from an interrupt.
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Start still running a minute after it was interrupted")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start = %v, want context.Canceled", err)
	}
	if !hostpath.Exists(marker) {
		t.Fatal("the hook never ran: the test did not interrupt a checkout")
	}
	if hostpath.Exists(dir + ".worktrees") {
		t.Error("worktree directory left behind")
	}
	if out := git(t, dir, "branch", "--list", "x"); out != "" {
		t.Errorf("branch left behind: %q", out)
	}
	if out := git(t, dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktree entry left behind:\n%s", out)
	}
	envs, err := r.Store.Envs(context.Background(), true)
	if err != nil || len(envs) != 0 {
		t.Errorf("rows left behind: %d, %v", len(envs), err)
	}
}
