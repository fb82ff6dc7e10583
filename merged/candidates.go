package merged

import (
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/state"
)

// Exposed are the envs that a change to the branch a hook runs on could
// merge: those with commits of their own based on that branch, or on a
// remote branch of the same name (origin/main for main: a pull brings
// it).
func Exposed(envs []*state.Env, view *gitx.HookView) []*state.Env {
	var exposed []*state.Env
	for _, e := range envs {
		tip, ok := view.Tips[e.Branch]
		_, remote, _ := strings.Cut(e.Base, "/")
		_, local := view.Tips[e.Base]
		if e.Branch != "" && ok && tip != e.StartCommit && view.Branch != "" &&
			(e.Base == view.Branch || !local && remote == view.Branch) {
			exposed = append(exposed, e)
		}
	}
	return exposed
}

// Candidates are the exposed envs that the change could have merged,
// picked without a git process of its own: those whose tip the change
// brought, whose work touched a path the change touched, that an earlier
// check found merged, or that the cache knows nothing of. A change that
// neither brought an env's tip nor touched a path its work touched
// cannot have merged it.
func Candidates(exposed []*state.Env, tips map[string]string, brought gitx.Brought, cache map[state.Span]state.Touch) []*state.Env {
	var picked []*state.Env
	for _, e := range exposed {
		tip := tips[e.Branch]
		known, ok := cache[state.Span{Start: e.StartCommit, Tip: tip}]
		if !ok || known.Merged != "" || brought.Commits[tip] || overlaps(known.Paths, brought.Paths) {
			picked = append(picked, e)
		}
	}
	return picked
}

// Spans are the spans of envs' branches, for reading the cache.
func Spans(envs []*state.Env, tips map[string]string) []state.Span {
	var spans []state.Span
	for _, e := range envs {
		if tip, ok := tips[e.Branch]; ok && e.Branch != "" {
			spans = append(spans, state.Span{Start: e.StartCommit, Tip: tip})
		}
	}
	return spans
}
