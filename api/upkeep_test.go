package api_test

import (
	"encoding/json"
	"net/http"
	"os"
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
