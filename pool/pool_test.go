package pool

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/git-apex/git-apex/gitx/gittest"
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
