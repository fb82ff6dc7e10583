//go:build !linux

package disarm

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/git-apex/git-apex/planted"
)

// disarm walks dir by path (this system has no openat2 or O_PATH: a
// container that swaps a directory for a link during the walk could
// redirect a chmod), clearing set-id bits and, with open, opening the
// user's closed directories.
func disarm(dir string, open bool) (Result, error) {
	var d Result
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		if err != nil {
			d.Closed = append(d.Closed, rel)
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		if rel != "." && (e.Name() == ".git" && rel != ".git" || e.IsDir() && e.Name() != ".git" && planted.IsGitDir(path)) {
			d.GitDirs = append(d.GitDirs, filepath.ToSlash(rel))
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		other := ok && os.Getuid() != 0 && int(st.Uid) != os.Getuid()
		if other && (len(d.Others) == 0 || !strings.HasPrefix(rel, d.Others[len(d.Others)-1]+string(filepath.Separator))) {
			d.Others = append(d.Others, rel)
		}
		if other && info.IsDir() && syscall.Access(path, 0o3) != nil {
			d.Foreign = append(d.Foreign, rel)
			return fs.SkipDir
		}
		switch m := info.Mode(); {
		case m.IsRegular() && m&(fs.ModeSetuid|fs.ModeSetgid) != 0:
			if os.Chmod(path, m&^(fs.ModeSetuid|fs.ModeSetgid)) == nil {
				d.Cleared = append(d.Cleared, rel)
			} else {
				d.Stuck = append(d.Stuck, rel)
			}
		case m.IsDir() && open && rel != "." && m.Perm()&0o700 != 0o700:
			if os.Chmod(path, m|0o700) == nil {
				d.Opened = append(d.Opened, rel)
			}
		}
		return nil
	})
	return d, err
}
