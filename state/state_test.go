package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newEnv(identity, branch string) *Env {
	return &Env{Identity: identity, Workflow: "feature", Name: identity, ModeAsked: "worktree", Mode: "worktree",
		Path: "/w/" + identity, Branch: branch, Base: "main", StartCommit: "abc", Status: Active}
}

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestCreateLookupAndLiveUniqueness(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a dir with spaces?#%", "apex", "state.db")
	s := open(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %s: %v", path, err)
	}
	e := newEnv("feature-x", "x")
	e.Metadata = map[string]string{"k": "v"}
	if err := s.Create(ctx, e, "created", ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.Live(ctx, "feature-x")
	if err != nil || got == nil || got.ID != e.ID || got.Metadata["k"] != "v" || got.Branch != "x" {
		t.Fatalf("Live = %+v, %v", got, err)
	}
	if err := s.Create(ctx, newEnv("feature-x", "other"), "created", ""); !errors.Is(err, ErrIdentityTaken) {
		t.Errorf("second live env for one identity: %v", err)
	}
	if err := s.Create(ctx, newEnv("bugfix-x", "x"), "created", ""); !errors.Is(err, ErrBranchTaken) {
		t.Errorf("second live env for one branch: %v", err)
	}
	got.Status = Destroyed
	if err := s.Save(ctx, got, "removed", ""); err != nil {
		t.Fatal(err)
	}
	if live, _ := s.Live(ctx, "feature-x"); live != nil {
		t.Errorf("destroyed env still live: %+v", live)
	}
	if err := s.Create(ctx, newEnv("feature-x", "x"), "created", ""); err != nil {
		t.Errorf("identity not freed by destroy: %v", err)
	}
	all, _ := s.Envs(ctx, true)
	live, _ := s.Envs(ctx, false)
	if len(all) != 2 || len(live) != 1 {
		t.Errorf("Envs: %d all, %d live", len(all), len(live))
	}
	events, _ := s.Events(ctx, "feature-x", 0)
	kinds := []string{}
	for _, ev := range events {
		kinds = append(kinds, ev.Kind)
	}
	if strings.Join(kinds, ",") != "created,removed,created" {
		t.Errorf("events = %v", kinds)
	}
}

func TestNewerSchemaRefusesWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path)
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path)
	if _, err := s.Envs(ctx, true); err != nil {
		t.Errorf("reading a newer schema failed: %v", err)
	}
	err := s.Create(ctx, newEnv("feature-x", "x"), "created", "")
	if err == nil || !strings.Contains(err.Error(), "upgrade git-apex") {
		t.Errorf("write to a newer schema: %v", err)
	}
}

// TestManyProcessesCreateOneDatabase starts 16 processes that each open
// a brand-new database and write to it at once.
func TestManyProcessesCreateOneDatabase(t *testing.T) {
	if os.Getenv("STATE_TEST_HELPER") != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "apex", "state.db")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCreate$")
			cmd.Env = append(os.Environ(), "STATE_TEST_HELPER=1", "STATE_DB="+path, fmt.Sprintf("STATE_ID=%d", i))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("process %d: %v: %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := open(t, path)
	envs, err := s.Envs(context.Background(), false)
	if err != nil || len(envs) != 16 {
		t.Fatalf("%d envs, %v", len(envs), err)
	}
}

func TestHelperCreate(t *testing.T) {
	if os.Getenv("STATE_TEST_HELPER") == "" {
		t.Skip("helper for TestManyProcessesCreateOneDatabase")
	}
	s := open(t, os.Getenv("STATE_DB"))
	id := "task-" + os.Getenv("STATE_ID")
	if err := s.Create(context.Background(), newEnv(id, id), "created", ""); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkOpenAndLookup is what `git apex path` pays in the database:
// open an existing state file and find one live env among 100.
func BenchmarkOpenAndLookup(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "state.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		id := fmt.Sprintf("task-%d", i)
		if err := s.Create(ctx, newEnv(id, id), "created", ""); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	for b.Loop() {
		s, err := Open(ctx, path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if e, err := s.Live(ctx, "task-50"); err != nil || e == nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// TestCheckFindsPageDamage: a page overwritten in the middle of the file
// passes Open's header check; Check finds it, as a DamagedError.
func TestCheckFindsPageDamage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, newEnv("feature-x", "x"), "created", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("a whole database: %v", err)
	}
	s.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(strings.Repeat("\xff", 12)), 2*4096) // the third page's header
	f.Close()
	s = open(t, path)
	var damaged *DamagedError
	if err := s.Check(ctx); !errors.As(err, &damaged) || !strings.Contains(err.Error(), "page 3") && !strings.Contains(err.Error(), "Page 3") {
		t.Fatalf("Check = %v, want the damage to page 3", err)
	}
}

// TestTakeoverHasOneWinner has many processes' worth of goroutines take
// over the same dead holder's slot at once: exactly one gets it, with the
// task group recorded; the rest get nil.
func TestTakeoverHasOneWinner(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	slot, err := s.Pool().Add(ctx, "/p/slot-1", "abc", 41, 4100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Pool().SetTask(ctx, slot.ID, 42, 4200); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	won := make(chan *Slot, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := s.Pool().Takeover(ctx, slot.ID, 41, 4100, 100+i, 1)
			if err != nil {
				t.Error(err)
			}
			if got != nil {
				won <- got
			}
		}()
	}
	wg.Wait()
	close(won)
	var winners []*Slot
	for w := range won {
		winners = append(winners, w)
	}
	if len(winners) != 1 || winners[0].TaskGroup != 42 || winners[0].TaskStart != 4200 || winners[0].HolderPID < 100 {
		t.Fatalf("winners = %+v; want one, holding the task group", winners)
	}
	if err := s.Pool().Free(ctx, slot.ID, "abc"); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.Pool().All(ctx); all[0].Leased() || all[0].TaskGroup != 0 {
		t.Errorf("after Free: %+v", all[0])
	}
}
