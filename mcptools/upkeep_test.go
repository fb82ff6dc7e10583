package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-apex/git-apex/gitx/gittest"
)

// upkeep is an MCP session with the built git-apex, in a new repository.
type upkeep struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	session *mcp.ClientSession
	tools   map[string]*mcp.Tool
}

func newUpkeep(t *testing.T) *upkeep {
	t.Helper()
	bin := build(t)
	dir := gittest.NewRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = dir, testEnv(t)
	session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	listed, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := &upkeep{t: t, ctx: ctx, dir: dir, session: session, tools: map[string]*mcp.Tool{}}
	for _, tool := range listed.Tools {
		u.tools[tool.Name] = tool
	}
	return u
}

// call calls a tool, fails the test on a protocol error, and decodes its
// structured result into out unless it is a tool error; it returns the
// result.
func (u *upkeep) call(name string, args map[string]any, out any) *mcp.CallToolResult {
	u.t.Helper()
	res, err := u.session.CallTool(u.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		u.t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			u.t.Fatalf("%s: %v: %s", name, err, data)
		}
	}
	return res
}

// hints are a tool's annotations: whether it is read-only and
// destructive.
func (u *upkeep) hints(name string) (readOnly, destructive bool) {
	u.t.Helper()
	tool, ok := u.tools[name]
	if !ok {
		u.t.Fatalf("no tool %s", name)
	}
	a := tool.Annotations
	if a == nil {
		return false, true // MCP's defaults
	}
	// destructiveHint means something only when the tool is not read-only.
	return a.ReadOnlyHint, !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
}

// message is a tool error's text, and its exit code and field from _meta.
func message(res *mcp.CallToolResult) (text string, code int, field string) {
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	c, _ := res.Meta["exit_code"].(float64)
	field, _ = res.Meta["field"].(string)
	return text, int(c), field
}

// TestGCTool: gc with dry_run says what it would remove and changes
// nothing; without, it removes a merged env, as `git apex gc --merged`
// does; the tool is marked destructive.
func TestGCTool(t *testing.T) {
	u := newUpkeep(t)
	if _, destructive := u.hints("gc"); !destructive {
		t.Error("the gc tool is not marked destructive")
	}
	var env struct{ Path, Branch string }
	u.call("start", map[string]any{"identity": "feature-done"}, &env)
	gittest.Git(t, env.Path, "commit", "-q", "--allow-empty", "-m", "the work")
	gittest.Git(t, u.dir, "merge", "-q", "--no-edit", env.Branch)

	type items struct {
		Items []struct{ Action, Identity, Reason string }
	}
	var got items
	u.call("gc", map[string]any{"merged": true, "dry_run": true}, &got)
	if len(got.Items) != 1 || got.Items[0].Action != "would remove" || got.Items[0].Identity != "feature-done" {
		t.Errorf("dry run: %+v", got)
	}
	if _, err := os.Stat(env.Path); err != nil {
		t.Fatalf("the dry run removed the worktree: %v", err)
	}
	u.call("gc", map[string]any{"merged": true}, &got)
	if len(got.Items) != 1 || got.Items[0].Action != "removed" || !strings.Contains(got.Items[0].Reason, "deleted branch") {
		t.Errorf("gc: %+v", got)
	}
	if _, err := os.Stat(env.Path); !os.IsNotExist(err) {
		t.Errorf("the merged env's worktree is still there: %v", err)
	}
	res := u.call("gc", map[string]any{"older_than": "soon"}, nil)
	if text, code, field := message(res); !res.IsError || code != 2 || field != "older_than" || !strings.Contains(text, "use a positive duration") {
		t.Errorf("a bad older_than: %v exit %d field %q: %s", res.IsError, code, field, text)
	}
}

// TestPoolTools: pool_status, pool_warm and pool_drain are `git apex
// pool status`, `warm` and `drain`; drain alone is marked destructive,
// status is not read-only (it reclaims the slots of dead holders).
func TestPoolTools(t *testing.T) {
	u := newUpkeep(t)
	for tool, want := range map[string]bool{"pool_status": false, "pool_warm": false, "pool_drain": true} {
		if readOnly, destructive := u.hints(tool); destructive != want || readOnly {
			t.Errorf("%s: read-only %v, destructive %v; want destructive %v", tool, readOnly, destructive, want)
		}
	}
	type report struct {
		Total, Available int
		Slots            []struct{ Path string }
	}
	res := u.call("pool_warm", map[string]any{"containers": -1}, nil)
	if text, code, field := message(res); !res.IsError || code != 2 || field != "containers" || !strings.Contains(text, "must be 0 or more") {
		t.Errorf("a negative containers: %v exit %d field %q: %s", res.IsError, code, field, text)
	}
	var got report
	u.call("pool_warm", map[string]any{"size": 2}, &got)
	if got.Total != 2 || got.Available != 2 {
		t.Fatalf("pool_warm size 2: %+v", got)
	}
	u.call("pool_status", map[string]any{}, &got)
	if got.Total != 2 || len(got.Slots) != 2 {
		t.Errorf("pool_status: %+v", got)
	}
	slot := got.Slots[1].Path
	if err := os.WriteFile(slot+"/mine.txt", []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var drained struct {
		Removed int
		Trash   []struct{ Identity, Path string }
	}
	u.call("pool_drain", map[string]any{}, &drained)
	if drained.Removed != 2 || len(drained.Trash) != 1 || drained.Trash[0].Path != slot {
		t.Errorf("pool_drain: %+v", drained)
	}
	u.call("pool_status", map[string]any{}, &got)
	if got.Total != 0 {
		t.Errorf("after pool_drain: %+v", got)
	}
}

// TestDoctorTools: doctor reports an env whose worktree was deleted by
// hand and changes nothing (read-only); doctor_fix repairs its record
// (destructive); a damaged state database is a finding, rebuilt by the
// fix.
func TestDoctorTools(t *testing.T) {
	u := newUpkeep(t)
	if readOnly, destructive := u.hints("doctor"); !readOnly || destructive {
		t.Errorf("doctor: read-only %v, destructive %v", readOnly, destructive)
	}
	if _, destructive := u.hints("doctor_fix"); !destructive {
		t.Error("doctor_fix is not marked destructive")
	}
	type report struct {
		Findings []struct{ Check, Status, Detail string }
	}
	status := func(r report, check string) string {
		for _, f := range r.Findings {
			if f.Check == check {
				return f.Status
			}
		}
		return ""
	}
	var env struct{ Path string }
	u.call("start", map[string]any{"identity": "feature-gone"}, &env)
	u.call("start", map[string]any{"identity": "feature-kept"}, nil)
	if err := os.Rename(env.Path, env.Path+"-moved"); err != nil { // moved by hand: doctor finds it, its fix follows it
		t.Fatal(err)
	}
	var got report
	for range 2 { // the check changes nothing
		u.call("doctor", map[string]any{}, &got)
		if status(got, "feature-gone") != "problem" || status(got, "state") != "ok" {
			t.Errorf("doctor: %+v", got)
		}
	}
	u.call("doctor_fix", map[string]any{}, &got)
	if status(got, "feature-gone") != "fixed" {
		t.Errorf("doctor_fix: %+v", got)
	}
	u.call("doctor", map[string]any{}, &got)
	if s := status(got, "feature-gone"); s != "" {
		t.Errorf("doctor after doctor_fix: %s: %+v", s, got)
	}
	u.call("remove", map[string]any{"identity": "feature-gone"}, nil)

	db := u.dir + "/.git/apex/state.db"
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		os.Remove(f)
	}
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := u.call("list", map[string]any{}, nil)
	if _, code, _ := message(res); !res.IsError || code != 3 {
		t.Errorf("list with a damaged database: %v exit %d", res.IsError, code)
	}
	u.call("doctor", map[string]any{}, &got)
	if len(got.Findings) != 1 || got.Findings[0].Status != "problem" || !strings.Contains(got.Findings[0].Detail, "damaged") {
		t.Errorf("doctor of a damaged database: %+v", got)
	}
	u.call("doctor_fix", map[string]any{}, &got)
	if status(got, "state") != "fixed" {
		t.Errorf("doctor_fix of a damaged database: %+v", got)
	}
	var listed struct{ Envs []struct{ Identity string } }
	u.call("list", map[string]any{}, &listed)
	if len(listed.Envs) != 1 || listed.Envs[0].Identity != "feature-kept" {
		t.Errorf("after the rebuild: %+v", listed)
	}
}

// TestTrashTools: trash lists the work a forced removal discarded and
// restore brings it back in a new env of the identity, as `git apex
// restore --list` and `restore <identity>` do; neither is destructive.
func TestTrashTools(t *testing.T) {
	u := newUpkeep(t)
	if readOnly, _ := u.hints("trash"); !readOnly {
		t.Error("trash is not read-only")
	}
	if _, destructive := u.hints("restore"); destructive {
		t.Error("restore is marked destructive")
	}
	var env struct{ Path string }
	u.call("start", map[string]any{"identity": "feature-lost"}, &env)
	if err := os.WriteFile(env.Path+"/work.txt", []byte("unsaved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u.call("remove", map[string]any{"identity": "feature-lost", "force": true}, nil)
	var listed struct{ Entries []struct{ Identity string } }
	u.call("trash", map[string]any{}, &listed)
	if len(listed.Entries) != 1 || listed.Entries[0].Identity != "feature-lost" {
		t.Fatalf("trash: %+v", listed)
	}
	var restored struct {
		Env struct{ Identity, Path string }
	}
	u.call("restore", map[string]any{"identity": "feature-lost"}, &restored)
	if data, err := os.ReadFile(restored.Env.Path + "/work.txt"); err != nil || string(data) != "unsaved\n" {
		t.Errorf("the work did not come back: %+v %q %v", restored, data, err)
	}
	res := u.call("restore", map[string]any{"identity": "feature-lost"}, nil)
	if text, code, _ := message(res); !res.IsError || code != 7 || !strings.Contains(text, "the trash holds nothing of it") {
		t.Errorf("a second restore: %v exit %d: %s", res.IsError, code, text)
	}
	u.call("trash", map[string]any{}, &listed)
	if len(listed.Entries) != 0 {
		t.Errorf("the entry restored is still in the trash: %+v", listed)
	}
}
