package trap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// pathMax is the longest path, relative to the worktree's top, that git
// can open there (Linux's PATH_MAX, with its closing NUL): git opens a
// worktree's files by such paths, and the kernel refuses a longer one,
// so the walk goes no deeper. An absolute path has no such bound here:
// the walk opens each directory through the handle of the one above it,
// as git does by its relative paths (a walk by absolute paths could not
// open a directory 4,096 characters from / and never looked in it).
const pathMax = 4095

// gitfileMax is the most git reads of a .git file (4 times PATH_MAX): a
// bigger one it refuses to follow.
const gitfileMax = 4 * 4096

// batch is how many names the walk reads from a directory at a time: a
// directory of millions of entries costs no more memory than this.
const batch = 1024

// walker is one look at a worktree for traps.
type walker struct {
	ctx   context.Context
	found []Trap
}

// Trap is something in a worktree that would hold git for ever, or that
// the look for them could not see into.
type Trap struct {
	Path string // absolute
	Why  string // what it is: "a named pipe", Closed, "cannot be looked at (...)"
	// Unseen is set for what the walk could not look at (an error but
	// Closed's): Remove leaves it, for the user to look at.
	Unseen bool
}

// find walks the worktree at dir, a directory at a time through the
// handle of the directory above it, never following a link, and returns
// the traps in it (the first foundMax), stopping early with what it
// found so far once ctx is done. What it cannot look at, but git could
// open, is a trap too: a walk that says nothing of what it could not see
// would let git wait there unseen.
func find(ctx context.Context, dir string) []Trap {
	w := &walker{ctx: ctx}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		w.unseen(dir, "the worktree git-apex cannot open", err)
	default:
		w.walk(fd, dir, "")
	}
	return w.found
}

// add notes a trap, up to foundMax.
func (w *walker) add(path, why string) {
	if len(w.found) < foundMax {
		w.found = append(w.found, Trap{Path: path, Why: why})
	}
}

// unseen notes what the walk could not look at for err, up to foundMax.
func (w *walker) unseen(path, what string, err error) {
	if len(w.found) < foundMax {
		w.found = append(w.found, Trap{Path: path, Why: what + " (" + err.Error() + ")", Unseen: true})
	}
}

// done reports whether the walk is to stop: its context is done, or it
// found as many traps as it names.
func (w *walker) done() bool { return w.ctx.Err() != nil || len(w.found) == foundMax }

// walk looks at every entry of the directory open at fd (abs, and rel to
// the top: "" for the top) and below, and closes fd.
func (w *walker) walk(fd int, abs, rel string) {
	f := os.NewFile(uintptr(fd), abs)
	defer f.Close()
	for !w.done() {
		names, err := f.Readdirnames(batch)
		slices.Sort(names) // traps named in the same order each time, in a small directory
		for _, name := range names {
			if w.done() {
				return
			}
			w.entry(fd, abs, rel, name)
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			w.unseen(abs, "a directory git-apex cannot list", err)
			return
		}
	}
}

// entry looks at the entry name of the directory open at fd (abs, rel).
func (w *walker) entry(fd int, dirAbs, dirRel, name string) {
	abs, rel := filepath.Join(dirAbs, name), name
	if dirRel != "" {
		rel = dirRel + "/" + name
	}
	if len(rel) > pathMax {
		return // git cannot open it either
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EACCES) { // gone meanwhile; or git cannot reach it either
			w.unseen(abs, "an entry git-apex cannot look at", err)
		}
		return
	}
	own := slices.Contains(names, name)
	nestedGit := name == ".git" && dirRel != "" // the top's is the env's own
	switch mode := uint32(st.Mode) & unix.S_IFMT; mode {
	case unix.S_IFDIR:
		if nestedGit {
			w.gitEntry(fd, abs, name, mode)
		}
		w.dir(fd, abs, rel, name)
	case unix.S_IFREG:
		if own && st.Size > maxSize {
			w.add(abs, fmt.Sprintf("of %d bytes, more than the %d git-apex lets git read", st.Size, maxSize))
		} else if nestedGit {
			w.gitEntry(fd, abs, name, mode)
		}
	case unix.S_IFLNK:
		if nestedGit {
			w.gitEntry(fd, abs, name, mode)
		}
	default:
		if own || underGitDir(dirRel) {
			w.add(abs, kind(mode))
		}
	}
}

// dir walks the directory name of the one open at fd. One that this user
// may enter but not list (`chmod 0111`) is a trap: git opens the files
// it knows there by name (its .gitattributes, say), and the walk cannot
// see them; one it may not enter, git cannot reach into either.
func (w *walker) dir(fd int, abs, rel, name string) {
	sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		w.walk(sub, abs, rel)
	case errors.Is(err, unix.EACCES):
		if unix.Faccessat(fd, name, unix.X_OK, 0) == nil {
			w.add(abs, Closed)
		}
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		// gone, or swapped for something git does not walk into, meanwhile
	default:
		w.unseen(abs, "a directory git-apex cannot open", err)
	}
}

// Closed is the Why of a directory that git may enter but the walk
// cannot list.
const Closed = "a directory git can enter but git-apex cannot list"

// gitEntry looks where a nested .git entry (name in the directory open
// at fd, at abs; of type mode) sends git: git takes the directory
// holding it for a repository of its own when it is a git directory, a
// link to one, or a file saying "gitdir: <path>", and then opens that
// git directory's HEAD (and commondir) as files. Those, special or too
// big, are traps of the .git entry's; so is a link to anything but a
// directory. The .git file is read opening nothing else: no link
// followed, no wait on a pipe, at most as much as git reads of it.
func (w *walker) gitEntry(fd int, abs, name string, mode uint32) {
	var gitDir int
	var err error
	via := ""
	switch mode {
	case unix.S_IFDIR:
		gitDir, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	case unix.S_IFLNK:
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, 0) != nil {
			return // a link to nothing: git finds no repository there
		}
		if uint32(st.Mode)&unix.S_IFMT != unix.S_IFDIR {
			w.add(abs, "a link git follows to "+kind(uint32(st.Mode)&unix.S_IFMT))
			return
		}
		gitDir, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	case unix.S_IFREG:
		var target string
		if target, err = readGitfile(fd, name); err != nil || target == "" {
			break
		}
		via = "a .git file naming " + strconv.Quote(target) + ", whose "
		// openat resolves a relative path from the .git file's directory, as git does.
		gitDir, err = unix.Openat(fd, target, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil || (mode == unix.S_IFREG && via == "") {
		return // nothing git would open as a repository's files
	}
	defer unix.Close(gitDir)
	if via == "" {
		via = "a git directory whose "
	}
	for _, file := range []string{"HEAD", "commondir"} {
		var st unix.Stat_t
		if mode == unix.S_IFDIR && (unix.Fstatat(gitDir, file, &st, unix.AT_SYMLINK_NOFOLLOW) != nil ||
			uint32(st.Mode)&unix.S_IFMT != unix.S_IFLNK) {
			continue // the walk looks at what a .git directory holds; a link in it is followed here
		}
		if unix.Fstatat(gitDir, file, &st, 0) != nil { // followed, as git follows it
			continue
		}
		switch t := uint32(st.Mode) & unix.S_IFMT; {
		case t != unix.S_IFREG && t != unix.S_IFDIR:
			w.add(abs, via+file+" is "+kind(t))
			return
		case t == unix.S_IFREG && st.Size > maxSize:
			w.add(abs, fmt.Sprintf("%s%s holds %d bytes, more than the %d git-apex lets git read", via, file, st.Size, maxSize))
			return
		}
	}
}

// readGitfile reads the .git file name in the directory open at fd, as
// git does (the path after "gitdir: "), opening no link and waiting on
// nothing; "" when git would not follow it.
func readGitfile(fd int, name string) (string, error) {
	h, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(h), name)
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() > gitfileMax {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(f, gitfileMax+1))
	if err != nil || len(data) > gitfileMax {
		return "", err
	}
	target, ok := bytes.CutPrefix(bytes.TrimRight(data, "\r\n"), []byte("gitdir: "))
	if !ok || len(target) == 0 || bytes.IndexByte(target, 0) >= 0 {
		return "", nil
	}
	return string(target), nil
}

// underGitDir reports whether the directory rel (relative to the top)
// is, or is below, a directory named .git.
func underGitDir(rel string) bool {
	for rel != "" && rel != "." {
		if filepath.Base(rel) == ".git" {
			return true
		}
		rel = filepath.Dir(rel)
	}
	return false
}

// kind names a file type that is no file, directory or link.
func kind(mode uint32) string {
	switch mode {
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFREG:
		return "a file"
	}
	return "a special file"
}
