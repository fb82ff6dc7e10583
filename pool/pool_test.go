package pool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-apex/git-apex/gitx/gittest"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
)

// TestConcurrentWarmersKeepTheSize runs eight warmers of a pool of three
// at once, each with its own connection and lock file handle as separate
// processes have: they make three slots between them, not more.
func TestConcurrentWarmersKeepTheSize(t *testing.T) {
	dir := gittest.NewRepo(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := repo.Open(ctx, dir, repo.Options{})
			if err != nil {
				errs <- err
				return
			}
			defer r.Close()
			_, err = New(r).Warm(ctx, 3)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, err := repo.Open(ctx, dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	slots, err := r.Store.Pool().All(ctx)
	if err != nil || len(slots) != 3 {
		t.Errorf("slots = %d, %v; want 3", len(slots), err)
	}
	if n := strings.Count(gittest.Git(t, dir, "worktree", "list", "--porcelain"), "worktree "); n != 4 {
		t.Errorf("git lists %d worktrees, want the main checkout and 3 slots", n)
	}
}

// TestKeptSlotsOfOneIDAndTheTrash keeps two failed tasks' slots with one
// identity, the second as task-fail-2, and releases a third's to the
// trash: its file is kept there, and its slot is idle and clean again.
func TestKeptSlotsOfOneIDAndTheTrash(t *testing.T) {
	dir := gittest.NewRepo(t)
	ctx := context.Background()
	r, err := repo.Open(ctx, dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := New(r)
	commit, err := p.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := policy.NewIdentity("task", "fail")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"task-fail", "task-fail-2"} {
		lease, err := p.Acquire(ctx, commit, 3, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		env, err := p.KeepSlot(ctx, lease, id, "failed")
		if err != nil || env.Identity != want || env.Path != lease.Path() {
			t.Fatalf("KeepSlot = %+v, %v; want %s at %s", env, err, want, lease.Path())
		}
	}
	lease, err := p.Acquire(ctx, commit, 3, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lease.Path(), "result.txt"), []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kept, err := p.ReleaseToTrash(ctx, lease, id)
	if err != nil || kept == nil || kept.Files != 1 || kept.Identity != "task-fail" {
		t.Fatalf("ReleaseToTrash = %+v, %v; want an entry of task-fail with 1 file", kept, err)
	}
	if _, err := os.Stat(filepath.Join(lease.Path(), "result.txt")); !os.IsNotExist(err) {
		t.Errorf("result.txt is still in the released slot (%v)", err)
	}
	slots, err := r.Store.Pool().All(ctx)
	if err != nil || len(slots) != 1 || slots[0].Leased() {
		t.Errorf("slots = %+v, %v; want one, idle", slots, err)
	}
}
