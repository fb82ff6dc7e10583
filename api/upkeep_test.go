package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-apex/git-apex/api"
	"github.com/git-apex/git-apex/gitx/gittest"
)

// destructive reports whether the OpenAPI document marks an operation
// as destructive (x-destructive).
func destructive(t *testing.T, method, path string) bool {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]map[string]any
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	op, ok := doc.Paths[path][strings.ToLower(method)]
	if !ok {
		t.Fatalf("%s %s is not in the OpenAPI document", method, path)
	}
	return op["x-destructive"] == true
}

type gcItem struct{ Action, Identity, Path, Reason string }

// itemOf is the item of gc's report about identity.
func itemOf(items []gcItem, identity string) gcItem {
	for _, it := range items {
		if it.Identity == identity {
			return it
		}
	}
	return gcItem{}
}

// TestGC: POST /api/gc with dryRun says what gc would remove and changes
// nothing; without, it removes a merged env and its branch, as `git apex
// gc --merged` does; a bad duration is 400 naming the field.
func TestGC(t *testing.T) {
	s := startServer(t)
	if !destructive(t, "POST", "/api/gc") {
		t.Error("POST /api/gc is not marked destructive")
	}
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-done"}, &wf)
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-going"}, nil)
	gittest.Git(t, wf.WorktreePath, "commit", "-q", "--allow-empty", "-m", "the work")
	gittest.Git(t, s.repo, "merge", "-q", "--no-edit", wf.Branch)

	var items []gcItem
	s.want(http.StatusOK, "POST", "/api/gc", map[string]any{"merged": true, "dryRun": true}, &items)
	if done := itemOf(items, "feature-done"); done.Action != "would remove" {
		t.Errorf("dry run: %+v", items)
	}
	if _, err := os.Stat(wf.WorktreePath); err != nil {
		t.Fatalf("the dry run removed the worktree: %v", err)
	}
	s.want(http.StatusOK, "POST", "/api/gc", map[string]any{"merged": true}, &items)
	if done := itemOf(items, "feature-done"); done.Action != "removed" || !strings.Contains(done.Reason, "deleted branch") {
		t.Errorf("gc: %+v", items)
	}
	if going := itemOf(items, "feature-going"); going.Action != "kept" {
		t.Errorf("gc of an env with no commits of its own: %+v", items)
	}
	if _, err := os.Stat(wf.WorktreePath); !os.IsNotExist(err) {
		t.Errorf("the merged env's worktree is still there: %v", err)
	}
	// The command line sees it the same way: nothing more to remove.
	out, err := s.apex("gc", "--merged", "--json")
	if err != nil || strings.Contains(out, "feature-done") || strings.Contains(out, `"removed"`) {
		t.Errorf("gc --merged --json after the API's gc: %s %v", out, err)
	}
	s.want(http.StatusOK, "POST", "/api/gc", nil, &items) // no body: gc with no flags
	var e apiError
	s.want(http.StatusBadRequest, "POST", "/api/gc", map[string]any{"olderThan": "soon"}, &e)
	if e.Error.Field != "olderThan" || e.Error.Code != 2 || !strings.Contains(e.Error.Message, "use a positive duration") {
		t.Errorf("a bad olderThan: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/gc", `{"dry_run": true}`, &e)
	if e.Error.Field != "dry_run" {
		t.Errorf("an unknown field: %+v", e)
	}
}

type poolReport struct {
	Total, Available, Leased, Waiting int
	Slots                             []struct{ Path, Commit, Status string }
}

// TestPool: GET /api/pool, POST /api/pool/warm and POST /api/pool/drain
// are `git apex pool status`, `warm` and `drain`: the pool warmed to a
// size, work changed by hand in a slot kept in the trash when drained,
// and bad counts refused naming the field; drain is marked destructive.
func TestPool(t *testing.T) {
	s := startServer(t)
	if !destructive(t, "POST", "/api/pool/drain") || destructive(t, "POST", "/api/pool/warm") || destructive(t, "GET", "/api/pool") {
		t.Error("of the pool's operations, drain alone is to be marked destructive")
	}
	var report poolReport
	s.want(http.StatusOK, "GET", "/api/pool", nil, &report)
	if report.Total != 0 {
		t.Errorf("a new repository's pool: %+v", report)
	}
	var e apiError
	s.want(http.StatusBadRequest, "POST", "/api/pool/warm", nil, &e)
	if e.Error.Code != 2 || !strings.Contains(e.Error.Message, "no pool size") {
		t.Errorf("warm with no size given or in the policy: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/pool/warm", map[string]any{"size": -2}, &e)
	if e.Error.Field != "size" || e.Error.Code != 2 || !strings.Contains(e.Error.Message, "must be 0 or more") {
		t.Errorf("a negative size: %+v", e)
	}

	s.want(http.StatusOK, "POST", "/api/pool/warm", map[string]any{"size": 2}, &report)
	if report.Total != 2 || report.Available != 2 || len(report.Slots) != 2 {
		t.Fatalf("warmed to 2: %+v", report)
	}
	out, err := s.apex("pool", "status", "--json")
	if err != nil || strings.Count(out, `"status": "idle"`) != 2 {
		t.Errorf("pool status --json after the API's warm: %s %v", out, err)
	}
	var again poolReport
	s.want(http.StatusOK, "GET", "/api/pool", nil, &again)
	if again.Total != 2 || again.Slots[0].Path != report.Slots[0].Path {
		t.Errorf("GET /api/pool after warm: %+v", again)
	}

	slot := report.Slots[0].Path
	if err := os.WriteFile(slot+"/mine.txt", []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var drained struct {
		Removed int
		Trash   []struct {
			Identity, Path string
			Files          int
		}
	}
	s.want(http.StatusOK, "POST", "/api/pool/drain", nil, &drained)
	if drained.Removed != 2 || len(drained.Trash) != 1 || drained.Trash[0].Path != slot || drained.Trash[0].Files != 1 {
		t.Errorf("drain: %+v", drained)
	}
	if _, err := os.Stat(slot); !os.IsNotExist(err) {
		t.Errorf("the drained slot is still there: %v", err)
	}
	s.want(http.StatusOK, "GET", "/api/pool", nil, &report)
	if report.Total != 0 {
		t.Errorf("after drain: %+v", report)
	}
}

type finding struct{ Check, Status, Detail string }

// findingOf is the finding of check, the last when there are more.
func findingOf(findings []finding, check string) finding {
	var out finding
	for _, f := range findings {
		if f.Check == check {
			out = f
		}
	}
	return out
}

// TestDoctor: GET /api/doctor reports an env whose worktree was deleted
// by hand and changes nothing; POST /api/doctor/fix repairs its record,
// as `git apex doctor --fix` does; a state database too damaged to open
// is a finding, and the fix rebuilds it from git. Only the fix is marked
// destructive.
func TestDoctor(t *testing.T) {
	s := startServer(t)
	if !destructive(t, "POST", "/api/doctor/fix") || destructive(t, "GET", "/api/doctor") {
		t.Error("doctor's fix alone is to be marked destructive")
	}
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-gone"}, &wf)
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-kept"}, nil)
	var findings []finding
	s.want(http.StatusOK, "GET", "/api/doctor", nil, &findings)
	if f := findingOf(findings, "state"); f.Status != "ok" {
		t.Errorf("state: %+v", findings)
	}
	if f := findingOf(findings, "feature-gone"); f.Status != "" {
		t.Errorf("a whole env has a finding: %+v", f)
	}
	// Moved by hand beside where it was: doctor finds it, its fix follows it.
	moved := wf.WorktreePath + "-moved"
	if err := os.Rename(wf.WorktreePath, moved); err != nil {
		t.Fatal(err)
	}
	s.want(http.StatusOK, "GET", "/api/doctor", nil, &findings)
	if f := findingOf(findings, "feature-gone"); f.Status != "problem" || !strings.Contains(f.Detail, moved) {
		t.Errorf("an env whose worktree was moved: %+v", findings)
	}
	s.want(http.StatusOK, "GET", "/api/doctor", nil, &findings)
	if f := findingOf(findings, "feature-gone"); f.Status != "problem" {
		t.Errorf("the check repaired something: %+v", findings)
	}
	s.want(http.StatusOK, "POST", "/api/doctor/fix", nil, &findings)
	if f := findingOf(findings, "feature-gone"); f.Status != "fixed" {
		t.Errorf("the fix: %+v", findings)
	}
	var env struct{ Status, Path string }
	s.want(http.StatusOK, "GET", "/api/developer/worktrees/feature-gone", nil, &env)
	if env.Status != "active" || env.Path != moved {
		t.Errorf("after the fix: %+v", env)
	}
	s.want(http.StatusOK, "DELETE", "/api/developer/worktrees/feature-gone", nil, nil)
	if out, err := s.apex("doctor"); err != nil {
		t.Errorf("doctor after the API's fix: %v\n%s", err, out)
	}

	// A damaged state database: every other request refuses it, doctor
	// reports it, the fix rebuilds it.
	db := filepath.Join(s.repo, ".git", "apex", "state.db")
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		os.Remove(f)
	}
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var e apiError
	s.want(http.StatusConflict, "GET", "/api/developer/worktrees", nil, &e)
	s.want(http.StatusOK, "GET", "/api/doctor", nil, &findings)
	if len(findings) != 1 || findings[0].Status != "problem" || !strings.Contains(findings[0].Detail, "damaged") {
		t.Errorf("doctor of a damaged database: %+v", findings)
	}
	s.want(http.StatusOK, "POST", "/api/doctor/fix", `{}`, &findings)
	if f := findings[0]; f.Check != "state" || f.Status != "fixed" || !strings.Contains(f.Detail, "feature-kept") {
		t.Errorf("the fix of a damaged database: %+v", findings)
	}
	var envs []struct{ Identity string }
	s.want(http.StatusOK, "GET", "/api/developer/worktrees", nil, &envs)
	if len(envs) != 1 || envs[0].Identity != "feature-kept" {
		t.Errorf("after the rebuild: %+v", envs)
	}
	s.want(http.StatusBadRequest, "POST", "/api/doctor/fix", `{"colour": "red"}`, &e)
}

// TestTrashAndRestore: GET /api/trash and POST /api/trash/{id}/restore
// are `git apex restore --list` and `restore <identity>`: the work a
// forced removal discarded comes back in a new env of the identity,
// refused while the identity is live (409) and once the trash holds
// nothing of it (404).
func TestTrashAndRestore(t *testing.T) {
	s := startServer(t)
	if destructive(t, "POST", "/api/trash/{id}/restore") || destructive(t, "GET", "/api/trash") {
		t.Error("restore and the trash's list are marked destructive")
	}
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-lost"}, &wf)
	if err := os.WriteFile(filepath.Join(wf.WorktreePath, "work.txt"), []byte("unsaved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.want(http.StatusOK, "DELETE", "/api/developer/worktrees/feature-lost?force=true", nil, nil)
	var entries []struct {
		Identity, Path string
		Files          int
	}
	s.want(http.StatusOK, "GET", "/api/trash", nil, &entries)
	if len(entries) != 1 || entries[0].Identity != "feature-lost" || entries[0].Files != 1 {
		t.Fatalf("the trash: %+v", entries)
	}

	var e apiError
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-lost"}, nil)
	s.want(http.StatusConflict, "POST", "/api/trash/feature-lost/restore", nil, &e)
	if e.Error.Code != 3 || !strings.Contains(e.Error.Message, "names a live environment") {
		t.Errorf("restore of a live identity: %+v", e)
	}
	s.want(http.StatusOK, "DELETE", "/api/developer/worktrees/feature-lost", nil, nil)

	var restored struct {
		Env             struct{ Identity, Path, Status string }
		From            struct{ Identity string }
		BranchRecreated bool `json:"branch_recreated"`
	}
	s.want(http.StatusCreated, "POST", "/api/trash/feature-lost/restore", nil, &restored)
	if restored.Env.Identity != "feature-lost" || restored.Env.Status != "active" || restored.From.Identity != "feature-lost" {
		t.Errorf("restore: %+v", restored)
	}
	if data, err := os.ReadFile(filepath.Join(restored.Env.Path, "work.txt")); err != nil || string(data) != "unsaved\n" {
		t.Errorf("the work did not come back: %q %v", data, err)
	}
	s.want(http.StatusOK, "GET", "/api/trash", nil, &entries)
	if len(entries) != 0 {
		t.Errorf("the entry restored is still in the trash: %+v", entries)
	}
	s.want(http.StatusNotFound, "POST", "/api/trash/feature-lost/restore", map[string]any{}, &e)
	if e.Error.Code != 7 || !strings.Contains(e.Error.Message, "the trash holds nothing of it") {
		t.Errorf("a second restore: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/trash/not%20an%20identity/restore", nil, &e)
	if e.Error.Field != "id" || e.Error.Code != 2 {
		t.Errorf("a bad identity: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/trash/feature-lost/restore", map[string]any{"branch": "bad..name"}, &e)
	if e.Error.Field != "branch" || e.Error.Code != 2 {
		t.Errorf("a bad branch: %+v", e)
	}
}
