package merged

import (
	"slices"
	"testing"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/state"
)

// TestCandidates checks which envs a change on main could have merged,
// and that nothing that could have merged is passed over.
func TestCandidates(t *testing.T) {
	env := func(id int64, branch, base, start string) *state.Env {
		return &state.Env{ID: id, Branch: branch, Base: base, StartCommit: start}
	}
	envs := []*state.Env{
		env(1, "fresh", "main", "s"),         // no commits of its own
		env(2, "brought", "main", "s"),       // its tip came with the change
		env(3, "touching", "main", "s"),      // touched a path the change touched
		env(4, "apart", "main", "s"),         // touched only other paths
		env(5, "known", "main", "s"),         // found merged by an earlier check
		env(6, "unknown", "main", "s"),       // not in the cache
		env(7, "stacked", "apart", "s"),      // based on another local branch
		env(8, "remote", "origin/main", "s"), // based on a remote branch
		env(9, "gone", "main", "s"),          // its branch is gone
		env(10, "", "main", "s"),             // no branch
	}
	view := &gitx.HookView{Branch: "main", Tips: map[string]string{
		"main": "m", "fresh": "s", "brought": "t2", "touching": "t3", "apart": "t4", "known": "t5",
		"unknown": "t6", "stacked": "t7", "remote": "t8", "elsewhere": "t11",
	}}
	exposed := Exposed(envs, view)
	var ids []int64
	for _, e := range exposed {
		ids = append(ids, e.ID)
	}
	if want := []int64{2, 3, 4, 5, 6, 8}; !slices.Equal(ids, want) {
		t.Fatalf("Exposed = %v, want %v", ids, want)
	}
	brought := gitx.Brought{Commits: map[string]bool{"t2": true, "m": true}, Paths: map[string]bool{"a.txt": true}}
	cache := map[state.Span]state.Touch{
		{Start: "s", Tip: "t2"}: {Paths: []string{"b.txt"}},
		{Start: "s", Tip: "t3"}: {Paths: []string{"b.txt", "a.txt"}},
		{Start: "s", Tip: "t4"}: {Paths: []string{"b.txt"}},
		{Start: "s", Tip: "t5"}: {Paths: []string{"b.txt"}, Merged: "squash-merged"},
		{Start: "s", Tip: "t8"}: {Paths: []string{"c.txt"}},
	}
	ids = nil
	for _, e := range Candidates(exposed, view.Tips, brought, cache) {
		ids = append(ids, e.ID)
	}
	if want := []int64{2, 3, 5, 6}; !slices.Equal(ids, want) {
		t.Errorf("Candidates = %v, want %v", ids, want)
	}
}
