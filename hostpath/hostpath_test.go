package hostpath

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealPath follows every link on the way, a dangling one included,
// and keeps what does not exist yet as written.
func TestRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(home, ".vim"), filepath.Join(dir, "repo", "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"repo/envs":     "../home/.vim",
		"repo/dangling": "../home/.ssh",
		"repo/sub/up":   "../envs/..",
		"repo/abs":      home,
		"repo/loop":     "loop",
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"repo/envs/pack/apex/start": "home/.vim/pack/apex/start",
		"repo/dangling/id_rsa":      "home/.ssh/id_rsa",
		"repo/sub/up/x":             "home/x",
		"repo/abs/.vim":             "home/.vim",
		"repo/missing/../sub":       "repo/sub",
		"repo/loop/x":               "repo/loop/x",
	} {
		if got := RealPath(filepath.Join(dir, path)); got != filepath.Join(dir, want) {
			t.Errorf("RealPath(%s) = %s, want %s", path, got, filepath.Join(dir, want))
		}
	}
}
