package repo

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// TestHostUser: run as root, the default container user is the one sudo
// names, else the owner of the main checkout; root only for root's own.
func TestHostUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to give the checkout to uid 2345")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "safe.directory")
	t.Setenv("GIT_CONFIG_VALUE_0", "*")
	if out, err := exec.Command("sh", "-c", "cd "+dir+" && git init -q && git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m init").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Setenv("SUDO_UID", "")
	t.Setenv("SUDO_GID", "")
	if uid, gid := r.HostUser(); uid != 0 || gid != 0 {
		t.Errorf("root's own checkout: %d:%d, want 0:0", uid, gid)
	}
	if err := os.Chown(dir, 2345, 2346); err != nil {
		t.Fatal(err)
	}
	if uid, gid := r.HostUser(); uid != 2345 || gid != 2346 {
		t.Errorf("uid 2345's checkout: %d:%d, want 2345:2346", uid, gid)
	}
	t.Setenv("SUDO_UID", "1000")
	t.Setenv("SUDO_GID", "1001")
	if uid, gid := r.HostUser(); uid != 1000 || gid != 1001 {
		t.Errorf("under sudo: %d:%d, want 1000:1001", uid, gid)
	}
}
