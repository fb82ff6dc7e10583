package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write writes a file in dir and commits it.
func write(t *testing.T, dir, name, content, msg string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", name)
	git(t, dir, "commit", "-q", "-m", msg)
}

const lines = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"

// mergedCase sets up a repository with a branch "topic" started at main,
// lets merge do something to main, and returns what Merged says.
func mergedCase(t *testing.T, work, merge func(t *testing.T, dir string)) string {
	t.Helper()
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "f", lines, "base")
	start := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "switch", "-q", "-c", "topic")
	if work != nil {
		work(t, dir)
	}
	git(t, dir, "switch", "-q", "main")
	if merge != nil {
		merge(t, dir)
	}
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.BaseRef(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	ancestors, err := r.MergedInto(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	tip := git(t, dir, "rev-parse", "topic")
	_, isAncestor := ancestors["topic"]
	reason, err := r.Merged(ctx, MergeCheck{Tip: tip, Start: start, Base: base}, isAncestor)
	if err != nil {
		t.Fatal(err)
	}
	return reason
}

func threeCommits(t *testing.T, dir string) {
	write(t, dir, "f", strings.Replace(lines, "two", "TWO", 1), "a")
	write(t, dir, "g", "new file\n", "b")
	write(t, dir, "f", strings.Replace(strings.Replace(lines, "two", "TWO", 1), "seven", "SEVEN", 1), "c")
}

func squash(t *testing.T, dir string) {
	git(t, dir, "merge", "-q", "--squash", "topic")
	git(t, dir, "commit", "-q", "-m", "squashed topic")
}

func TestMergedReasons(t *testing.T) {
	for _, tc := range []struct {
		name        string
		work, merge func(t *testing.T, dir string)
		want        string
	}{
		{"no commits of its own", nil, nil, ""},
		{"no commits, base moved on", nil, func(t *testing.T, dir string) { write(t, dir, "h", "x\n", "other") }, ""},
		{"one unmerged commit", threeCommits, nil, ""},
		{"merge commit", threeCommits, func(t *testing.T, dir string) { git(t, dir, "merge", "-q", "--no-ff", "--no-edit", "topic") }, MergedAncestor},
		{"fast-forward", threeCommits, func(t *testing.T, dir string) { git(t, dir, "merge", "-q", "--ff-only", "topic") }, MergedAncestor},
		{"squash of three commits", threeCommits, squash, MergedSameTree},
		{"squash, then base edits other lines of the same file", threeCommits, func(t *testing.T, dir string) {
			squash(t, dir)
			write(t, dir, "f", strings.Replace(strings.Replace(strings.Replace(lines, "two", "TWO", 1), "seven", "SEVEN", 1), "four", "FOUR", 1), "later edit")
		}, MergedSquash},
		{"squash, then base rewrites the squashed lines", threeCommits, func(t *testing.T, dir string) {
			squash(t, dir)
			write(t, dir, "f", strings.Replace(strings.Replace(lines, "two", "zwei", 1), "seven", "sieben", 1), "rewrite")
		}, MergedPatch},
		{"rebase merge of three commits onto a moved base", threeCommits, func(t *testing.T, dir string) {
			write(t, dir, "h", "unrelated\n", "unrelated")
			git(t, dir, "cherry-pick", "main..topic")
			write(t, dir, "f", strings.Replace(strings.Replace(strings.Replace(lines, "two", "zwei", 1), "seven", "SEVEN", 1), "one", "ONE", 1), "rewrite")
		}, MergedRebase},
		{"conflicting, unmerged", threeCommits, func(t *testing.T, dir string) {
			write(t, dir, "f", strings.Replace(lines, "two", "deux", 1), "conflict")
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergedCase(t, tc.work, tc.merge); got != tc.want {
				t.Errorf("Merged = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBaseRefPrefersAnUpstreamThatIsAhead checks the base is compared
// with origin/main once a fetch brought work the local main lacks.
func TestBaseRefPrefersAnUpstreamThatIsAhead(t *testing.T) {
	ctx := context.Background()
	upstream := newRepo(t)
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, "", "clone", "-q", upstream, clone)
	r, _ := Open(ctx, clone)
	if ref, err := r.BaseRef(ctx, "main"); err != nil || ref != "main" {
		t.Errorf("even: BaseRef = %q, %v", ref, err)
	}
	git(t, upstream, "commit", "-q", "--allow-empty", "-m", "ahead")
	git(t, clone, "fetch", "-q")
	if ref, _ := r.BaseRef(ctx, "main"); ref != "refs/remotes/origin/main" {
		t.Errorf("upstream ahead: BaseRef = %q", ref)
	}
	git(t, clone, "merge", "-q", "--ff-only", "origin/main")
	git(t, clone, "commit", "-q", "--allow-empty", "-m", "local")
	if ref, _ := r.BaseRef(ctx, "main"); ref != "main" {
		t.Errorf("local ahead: BaseRef = %q", ref)
	}
}
