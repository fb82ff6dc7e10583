package cleanstat

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tree makes a worktree-shaped directory (a .git file naming a git dir)
// with one file, and its common dir.
func tree(t *testing.T) Tree {
	t.Helper()
	root := t.TempDir()
	common, wt := filepath.Join(root, "common"), filepath.Join(root, "wt")
	gitDir := filepath.Join(common, "worktrees", "wt")
	for _, dir := range []string{gitDir, filepath.Join(common, "refs", "heads"), filepath.Join(wt, "dir")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(wt, ".git"), "gitdir: "+gitDir+"\n")
	write(t, filepath.Join(gitDir, "HEAD"), "ref: refs/heads/x\n")
	write(t, filepath.Join(wt, "dir", "f"), "one\n")
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", "")
	return Tree{Dir: wt, CommonDir: common, Branch: "x", Base: "main"}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// settle waits until the second after now, so that what was just written
// is no longer racy.
func settle() {
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
}

func TestSnapshotSeesChangesAndRaciness(t *testing.T) {
	tr := tree(t)
	if s := Take(tr); !s.Usable || !s.Racy {
		t.Fatalf("a snapshot of files written this second: %+v, want usable and racy", s)
	}
	settle()
	first := Take(tr)
	if !first.Usable || first.Racy || Take(tr).Digest != first.Digest {
		t.Fatalf("an unchanged tree: %+v, then another digest", first)
	}
	for name, change := range map[string]func(){
		"a new file in a directory": func() { write(t, filepath.Join(tr.Dir, "dir", "new"), "") },
		"the branch ref":            func() { write(t, filepath.Join(tr.CommonDir, "refs", "heads", "x"), "c\n") },
		"the config in GIT_CONFIG*": func() { t.Setenv("GIT_CONFIG_COUNT", "1") },
	} {
		before := Take(tr)
		change()
		if Take(tr).Digest == before.Digest {
			t.Errorf("%s changed and the snapshot did not", name)
		}
	}
	write(t, filepath.Join(tr.Dir, ".gitmodules"), "")
	if Take(tr).Usable {
		t.Error("a tree with submodules was usable")
	}
}

func TestKeepLookupPrune(t *testing.T) {
	tr := tree(t)
	settle()
	s := Take(tr)
	d := In(t.TempDir())
	counts := Counts{Counted: true, Ahead: 2}
	d.Keep(1, s, true, counts)
	d.Keep(2, s, true, counts)
	if got, ok := d.Lookup(1, s); !ok || got != counts {
		t.Fatalf("Lookup = %+v, %v", got, ok)
	}
	if _, ok := d.Lookup(1, Snapshot{Digest: "other", Usable: true}); ok {
		t.Error("another snapshot was looked up")
	}
	d.Keep(1, s, false, counts) // dirty now: forgotten
	if _, ok := d.Lookup(1, s); ok {
		t.Error("a dirty tree's snapshot was kept")
	}
	racy := s
	racy.Racy = true
	d.Keep(3, racy, true, counts)
	if _, ok := d.Lookup(3, racy); ok {
		t.Error("a racy snapshot was kept")
	}
	d.Prune(map[int64]bool{1: true, 3: true})
	if _, ok := d.Lookup(2, s); ok {
		t.Error("Prune kept an env that is not live")
	}
}
