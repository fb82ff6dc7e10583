package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/nofollow"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
)

// copyFiles copies what the [worktree].copy globs match in the main
// checkout into a new env: files, whole directories, and symlinks as
// links. A match inside the checkout keeps its relative path; a glob that
// leaves the checkout as written (used only when trusted) lands at the
// top of the env under its base name. outside lists the globs that leave
// the checkout as written or through a symbolic link (the policy's host
// settings); they are used only when trusted. Otherwise no match is
// copied from a directory that a link takes out of the checkout, and
// nothing is written through a link in the env: such a match is left
// out with a warning. With contained (a full env, whose container gets
// the copies) every glob is used only when trusted. Nothing that exists
// in the env, a tracked file say, is ever overwritten, and a glob that
// matches nothing is fine. It returns the files and links it wrote
// (slash paths in the env).
func copyFiles(r *repo.Repo, envPath string, globs, outside []string, trusted, contained bool) ([]string, error) {
	var written []string
	mainRoot := r.Git.MainRoot()
	if r.Git.Bare && len(globs) > 0 { // its directory holds git's files, not the project's
		r.Warnf("not copying worktree.copy's files: %s is a bare repository, with no main checkout to copy them from", mainRoot)
		return nil, nil
	}
	checkout := hostpath.RealPath(mainRoot)
	for _, glob := range globs {
		leaves := slices.Contains(outside, glob)
		if (leaves || contained) && !trusted {
			continue
		}
		pattern := glob
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(mainRoot, glob)
		}
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return written, fmt.Errorf("worktree.copy %q: %w", glob, err)
		}
		for _, src := range matches {
			rel := filepath.Base(src)
			if !policy.LeavesCheckout(glob) {
				rel, _ = filepath.Rel(mainRoot, src)
			}
			if rel == ".git" || hostpath.Within(filepath.Join(mainRoot, rel), filepath.Join(mainRoot, ".git")) {
				continue
			}
			if dir := hostpath.RealPath(filepath.Dir(src)); !leaves && !hostpath.Within(dir, checkout) {
				r.Warnf("not copying %s (worktree.copy %q): a symbolic link leads it out of the main checkout, to %s", rel, glob, dir)
				continue
			}
			var linked *nofollow.Error
			dst, err := nofollow.MkdirAll(envPath, filepath.Dir(rel))
			if errors.As(err, &linked) {
				r.Warnf("not copying %s (worktree.copy %q): %s in the environment %s, and nothing is written through it", rel, glob, linked.Part, linked.Why)
				continue
			} else if err != nil {
				return written, fmt.Errorf("worktree.copy %q: %w", glob, err)
			}
			err = copyTree(src, dst, filepath.Base(rel), filepath.ToSlash(rel), &written)
			dst.Close()
			if err != nil {
				return written, fmt.Errorf("worktree.copy %q: %w", glob, err)
			}
		}
	}
	return written, nil
}

// copyTree copies src to name in dst without overwriting anything or
// following a link there (a full env's container runs meanwhile): an
// existing file or link is left alone, an existing directory is filled
// in. The files and links it writes are added to written, as slash
// paths like rel, name's path in the env.
func copyTree(src string, dst *nofollow.Dir, name, rel string, written *[]string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if exists, isDir := dst.Lstat(name); exists && !(info.IsDir() && isDir) {
		return nil
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := dst.Symlink(target, name); err != nil {
			return err
		}
	case info.IsDir():
		sub, err := dst.Mkdir(name, info.Mode().Perm()|0o700)
		if err != nil {
			return err
		}
		defer sub.Close()
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(filepath.Join(src, e.Name()), sub, e.Name(), path.Join(rel, e.Name()), written); err != nil {
				return err
			}
		}
		return nil
	case info.Mode().IsRegular():
		if err := copyFile(src, dst, name, info); err != nil {
			return err
		}
	default:
		return nil // sockets, devices and pipes are not copied
	}
	*written = append(*written, rel)
	return nil
}

// copyFile copies a regular file with its mode and times. File.ReadFrom
// uses copy_file_range, which clones the data on file systems that can.
func copyFile(src string, dst *nofollow.Dir, name string, info fs.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := dst.Create(name, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := out.ReadFrom(in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return dst.Chtimes(name, info.ModTime(), info.ModTime())
}
