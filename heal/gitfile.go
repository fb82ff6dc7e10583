package heal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
)

// A linked worktree's .git file, read and written as a file: no git runs
// here (git would obey whatever git directory the file names).

// GitfileProblem checks the .git file of g's linked worktree at path: it
// must be a regular file that names a git directory directly under the
// common dir's worktrees/, whose gitdir file names path/.git back. It
// returns what is wrong, or "". A .git file pointing elsewhere would make
// every git command there obey another git directory's config.
func GitfileProblem(g *gitx.Repo, path string) string {
	dotgit := filepath.Join(path, ".git")
	info, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return "it has no .git file"
	case !info.Mode().IsRegular():
		return ".git is not a plain file"
	}
	target, err := readGitfile(dotgit)
	if err != nil {
		return err.Error()
	}
	if hostpath.RealPath(filepath.Dir(target)) != hostpath.RealPath(filepath.Join(g.CommonDir, "worktrees")) {
		return fmt.Sprintf("its .git file points to %s, not to a git directory of this repository's worktrees", target)
	}
	back, err := os.ReadFile(filepath.Join(target, "gitdir"))
	if err != nil || hostpath.RealPath(strings.TrimSpace(string(back))) != hostpath.RealPath(dotgit) {
		return fmt.Sprintf("its .git file points to %s, which belongs to another worktree", target)
	}
	return ""
}

// readGitfile reads the "gitdir: <path>" line of a .git file, resolving a
// relative path against the file's directory.
func readGitfile(name string) (string, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	target, ok := strings.CutPrefix(strings.TrimSpace(string(buf[:n])), "gitdir: ")
	if !ok || target == "" || strings.ContainsAny(target, "\n\x00") {
		return "", errors.New("its .git file is not a gitdir line")
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(name), target)
	}
	return filepath.Clean(target), nil
}

// RestoreGitfile rewrites the .git file of the linked worktree at path to
// name the git directory under worktrees/ that git registered for it,
// under the repository lock.
func RestoreGitfile(lk *gitx.Locked, path string) error {
	dotgit := filepath.Join(path, ".git")
	if info, err := os.Lstat(dotgit); err == nil && info.IsDir() {
		return fmt.Errorf("%s is a directory; move it away by hand", dotgit)
	}
	admin := filepath.Join(lk.CommonDir, "worktrees")
	entries, err := os.ReadDir(admin)
	if err != nil {
		return err
	}
	for _, e := range entries {
		back, err := os.ReadFile(filepath.Join(admin, e.Name(), "gitdir"))
		if err != nil || hostpath.RealPath(strings.TrimSpace(string(back))) != hostpath.RealPath(dotgit) {
			continue
		}
		// The directory may be a container's to write in: the new file is
		// made afresh (never through a link) and renamed over the old.
		tmp := dotgit + ".git-apex-tmp"
		os.Remove(tmp)
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString("gitdir: " + filepath.Join(admin, e.Name()) + "\n")
		if err := errors.Join(err, f.Close()); err != nil {
			os.Remove(tmp)
			return err
		}
		return os.Rename(tmp, dotgit)
	}
	return fmt.Errorf("git has no registration for %s", path)
}
