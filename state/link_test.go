package state

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestLinksResolveAndDropWithTheirEnv(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	e := newEnv("feature-x", "x")
	if err := s.Create(ctx, e, "created", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLink(ctx, "issue-42", e, KindLink, "feature-x"); err != nil {
		t.Fatal(err)
	}
	got, link, err := s.Resolve(ctx, "issue-42")
	if err != nil || got == nil || got.ID != e.ID || link == nil || link.Kind != KindLink {
		t.Fatalf("Resolve(issue-42) = %+v, %+v, %v", got, link, err)
	}
	if got, link, _ := s.Resolve(ctx, "feature-x"); got == nil || link != nil {
		t.Errorf("Resolve(own identity) = %+v, %+v", got, link)
	}
	if err := s.AddLink(ctx, "issue-42", e, KindLink, "feature-x"); !errors.Is(err, ErrAliasTaken) {
		t.Errorf("second link with one alias: %v", err)
	}
	if err := s.AddLink(ctx, "feature-x", e, KindLink, "feature-x"); !errors.Is(err, ErrAliasTaken) {
		t.Errorf("alias that is a live env's identity: %v", err)
	}

	// Closing the env's own identity frees it while the link keeps the env.
	e.IdentityClosed = true
	if err := s.Save(ctx, e, "closed", ""); err != nil {
		t.Fatal(err)
	}
	if live, _ := s.Live(ctx, "feature-x"); live != nil {
		t.Errorf("closed identity still live")
	}
	if err := s.Create(ctx, newEnv("feature-x", "x2"), "created", ""); err != nil {
		t.Errorf("closed identity not free for a new env: %v", err)
	}

	dropped, err := s.Destroy(ctx, e, "removed", "")
	if err != nil || len(dropped) != 1 || dropped[0] != "issue-42" {
		t.Fatalf("Destroy dropped %v, %v", dropped, err)
	}
	if got, _, _ := s.Resolve(ctx, "issue-42"); got != nil {
		t.Errorf("link outlived its env")
	}
	events, _ := s.Events(ctx, "issue-42", 0)
	if len(events) != 2 || events[0].Kind != "linked" || events[1].Kind != "unlinked" {
		t.Errorf("link events: %+v", events)
	}
}

// TestMigratesVersion1 opens a database written by the first schema and
// checks that its rows survive the migration.
func TestMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{migrations[0], "PRAGMA user_version = 1",
		`INSERT INTO envs (identity, workflow, name, mode_asked, mode, path, start_commit, status, created_at, updated_at)
		 VALUES ('feature-old', 'feature', 'old', 'worktree', 'worktree', '/w/old', 'abc', 'active', 1, 1)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := open(t, path)
	e, err := s.Live(ctx, "feature-old")
	if err != nil || e == nil || e.IdentityClosed || e.Engine != "" {
		t.Fatalf("after migration: %+v, %v", e, err)
	}
	e.Engine = `{"host":"tcp://h:1"}`
	if err := s.Save(ctx, e, "pinned", "test"); err != nil {
		t.Fatal(err)
	}
	if again, err := s.Live(ctx, "feature-old"); err != nil || again.Engine != e.Engine {
		t.Fatalf("engine not saved: %+v, %v", again, err)
	}
	if err := s.AddLink(ctx, "issue-1", e, KindLink, "feature-old"); err != nil {
		t.Errorf("links table missing after migration: %v", err)
	}
	if v, _ := userVersion(ctx, s.db); v != SchemaVersion {
		t.Errorf("user_version = %d, want %d", v, SchemaVersion)
	}
}

func TestTouchedCacheKeepsOnlyCurrentSpans(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	a, b := Span{"s1", "t1"}, Span{"s2", "t2"}
	if err := s.SaveTouched(ctx, map[Span]Touch{a: {Paths: []string{"x", "dir/y"}}, b: {Merged: "squash-merged"}}, []Span{a, b}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Touched(ctx, []Span{a, b, {"s3", "t3"}})
	if err != nil || len(got) != 2 || len(got[a].Paths) != 2 || got[a].Paths[1] != "dir/y" || got[b].Paths != nil || got[b].Merged != "squash-merged" {
		t.Fatalf("Touched = %v, %v", got, err)
	}
	// A save without current spans forgets nothing.
	c := Span{"s1", "t9"}
	if err := s.SaveTouched(ctx, map[Span]Touch{c: {Paths: []string{"z"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Touched(ctx, []Span{a, b, c}); len(got) != 3 {
		t.Errorf("after a save that prunes nothing: %v", got)
	}
	// A later save forgets spans that are no longer current.
	if err := s.SaveTouched(ctx, map[Span]Touch{c: {Paths: []string{"z"}}}, []Span{b, c}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Touched(ctx, []Span{a, b, c})
	if _, ok := got[a]; ok || len(got) != 2 {
		t.Errorf("after the second save: %v", got)
	}
}

func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	if _, err := Open(ctx, path, Options{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read-only open of no database: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a read-only open created the database")
	}
	open(t, path).Close()
	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Envs(ctx, false); err != nil {
		t.Errorf("read: %v", err)
	}
	if err := ro.Probe(ctx); err == nil {
		t.Error("a read-only store wrote")
	}
	rw := open(t, path)
	if _, err := rw.db.Exec("PRAGMA user_version = 4"); err != nil {
		t.Fatal(err)
	}
	var schema *SchemaError
	if _, err := Open(ctx, path, Options{ReadOnly: true}); !errors.As(err, &schema) || schema.Version != 4 {
		t.Errorf("read-only open of an older schema: %v, want a *SchemaError", err)
	}
}
