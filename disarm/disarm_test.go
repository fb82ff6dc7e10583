package disarm

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestDisarm: set-id bits go from every file in the worktree, never from
// one a link in it points to, and the user's closed directories open.
func TestDisarm(t *testing.T) {
	wt, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "sudo")
	deep := filepath.Join(wt, "a", "closed", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{
		secret:                          0o755 | os.ModeSetuid,
		filepath.Join(wt, "p"):          0o755 | os.ModeSetuid,
		filepath.Join(deep, "q"):        0o750 | os.ModeSetgid,
		filepath.Join(wt, "a", "plain"): 0o644,
	} {
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(wt, "a", "closed"), 0); err != nil {
		t.Fatal(err)
	}
	d, err := disarm(wt, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(d.Cleared)
	if want := []string{"a/closed/b/q", "p"}; !slices.Equal(d.Cleared, want) {
		t.Errorf("cleared %q, want %q", d.Cleared, want)
	}
	if want := []string{"a/closed"}; !slices.Equal(d.Opened, want) {
		t.Errorf("opened %q, want %q", d.Opened, want)
	}
	for path, want := range map[string]os.FileMode{
		secret:                   0o755 | os.ModeSetuid,
		filepath.Join(wt, "p"):   0o755,
		filepath.Join(deep, "q"): 0o750,
	} {
		if info, err := os.Lstat(path); err != nil || info.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, info.Mode(), err, want)
		}
	}
}

// TestDisarmAsAnotherUser: run as an unprivileged user (uid 2345), Tree
// opens that user's closed directories, names another user's that that
// user cannot empty (not an empty one, nor one open to all), what
// another user owns (the top of it), and the set-id files of another
// user's it cannot clear. It
// needs root, to make them.
func TestDisarmAsAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to give files to uid 2345")
	}
	base, err := os.MkdirTemp("", "apex-disarm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	program, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(base, "disarm.test")
	wt := filepath.Join(base, "wt")
	for _, step := range []error{
		os.Chmod(base, 0o755),
		os.WriteFile(self, program, 0o755),
		os.MkdirAll(filepath.Join(wt, "mine", "sub"), 0o755),
		os.MkdirAll(filepath.Join(wt, "roots"), 0o755),
		os.WriteFile(filepath.Join(wt, "roots", "f"), nil, 0o644),
		os.Mkdir(filepath.Join(wt, "roots-empty"), 0o755),
		os.MkdirAll(filepath.Join(wt, "roots-open", "sub"), 0o755),
		os.Chmod(filepath.Join(wt, "roots-open"), 0o777),
		os.WriteFile(filepath.Join(wt, "p"), nil, 0o755),
		filepath.WalkDir(wt, func(p string, _ os.DirEntry, err error) error {
			if err != nil || strings.Contains(p, "roots") && !strings.HasSuffix(p, "sub") {
				return err
			}
			return os.Lchown(p, 2345, 2345)
		}),
		os.Chmod(filepath.Join(wt, "p"), 0o755|os.ModeSetuid),
		os.WriteFile(filepath.Join(wt, "roots-p"), nil, 0o755),
		os.Chmod(filepath.Join(wt, "roots-p"), 0o755|os.ModeSetuid),
		os.Chmod(filepath.Join(wt, "mine", "sub"), 0),
		os.Chmod(filepath.Join(wt, "mine"), 0),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	cmd := exec.Command(self, "-test.run=^TestDisarmHelper$")
	cmd.Env = append(os.Environ(), "APEX_DISARM_DIR="+wt)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 2345, Gid: 2345}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var d Result
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &d); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	slices.Sort(d.Opened)
	slices.Sort(d.Others)
	if !slices.Equal(d.Cleared, []string{"p"}) || !slices.Equal(d.Opened, []string{"mine", "mine/sub"}) ||
		!slices.Equal(d.Foreign, []string{"roots"}) || len(d.Closed) != 0 ||
		!slices.Equal(d.Others, []string{"roots", "roots-empty", "roots-open", "roots-p"}) || !slices.Equal(d.Stuck, []string{"roots-p"}) {
		t.Errorf("as uid 2345: %+v", d)
	}
}

// TestDisarmHelper is TestDisarmAsAnotherUser's other user.
func TestDisarmHelper(t *testing.T) {
	dir := os.Getenv("APEX_DISARM_DIR")
	if dir == "" {
		t.Skip("run by TestDisarmAsAnotherUser")
	}
	d, err := disarm(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(d)
	os.Stdout.Write(append(data, '\n'))
}

// TestDisarmNotesGitDirs: the walk after an exec notes each .git below
// the top, a FIFO too, and each directory git would take for a git
// directory, in any directory, one split with commondir too; the
// worktree's own .git is not one.
func TestDisarmNotesGitDirs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"doc/objects", "doc/refs/heads", "nd", ".idea/y/objects", ".idea/y/refs", "doc2"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".git", "doc/HEAD", ".idea/y/HEAD", "doc2/HEAD", "doc2/commondir"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "nd", ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Tree(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(d.GitDirs)
	if want := []string{".idea/y", "doc", "doc2", "nd/.git"}; !slices.Equal(d.GitDirs, want) {
		t.Errorf("GitDirs = %q, want %q", d.GitDirs, want)
	}
}
