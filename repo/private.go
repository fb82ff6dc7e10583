package repo

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/git-apex/git-apex/hostpath"
)

// Private closes dir, a directory holding what a full env's container
// writes in (the directory holding a full env's worktree, the pool, the
// sandboxes), to every user but the host's (HostUser): a container run
// as root can always leave a set-user-id root file there (a process it
// leaves behind plants it again after each check), which only users who
// can reach it could run. A missing dir is made 0700 and given to the
// host's user (its missing parents as git would make them); an existing
// one is closed when Closable says so. It costs one stat when dir is as
// it should be, and reports whether it changed anything.
func (r *Repo) Private(dir string) (bool, error) {
	if !hostpath.Exists(dir) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return false, err
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return false, err
		}
		uid, gid := r.HostUser()
		if os.Geteuid() == 0 && uid != 0 {
			if err := os.Lchown(dir, uid, gid); err != nil {
				return true, err
			}
		}
		return true, os.Chmod(dir, 0o700)
	}
	if !r.Closable(dir) {
		return false, nil
	}
	return true, os.Chmod(dir, 0o700)
}

// Closable reports whether dir is a directory open to other users that
// Private may close: this process or the host's user owns it, and it is
// neither sticky (/tmp) nor the home directory, nor the main checkout or
// one of its ancestors (root = "../{identity}" puts envs in the
// checkout's parent: closing that is the user's call).
func (r *Repo) Closable(dir string) bool {
	info, err := os.Lstat(dir)
	if err != nil || !info.IsDir() || info.Mode().Perm()&0o077 == 0 || info.Mode()&os.ModeSticky != 0 {
		return false
	}
	uid, _ := r.HostUser()
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != uid && int(st.Uid) != os.Geteuid() {
		return false
	}
	home, _ := os.UserHomeDir()
	real := hostpath.RealPath(dir)
	return !(home != "" && real == hostpath.RealPath(home) || hostpath.Within(r.Git.MainRoot(), real) || real == filepath.Dir(real))
}
