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
