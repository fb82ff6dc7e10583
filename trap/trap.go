// Package trap finds the special files (named pipes, sockets, devices)
// planted where git opens a file of its own in a worktree: a .gitignore,
// .gitattributes or .gitmodules in any directory, or anything inside a
// nested .git directory. git opens such a file like any other and waits
// for ever on a named pipe no one writes, or reads a device without end;
// so whatever plants one (a full env's container, say) could hold every
// git command run in that worktree, and the repository lock and a `git
// merge` with it. A regular one of them bigger than maxSize is a trap
// too: git reads it whole (a sparse 2 GiB .gitignore took a list 21 s
// and 2 GB of memory). gitx watches every git command it runs in an env's
// worktree with Watch; heal refuses a worktree whose top holds one.
package trap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/nofollow"
)

// names are the files git opens in the directories of a worktree it
// walks.
var names = []string{".gitignore", ".gitattributes", ".gitmodules"}

// special is what a trap is: any type but a file, a directory or a
// symlink.
const special = fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice | fs.ModeIrregular

// maxSize is the most a .gitignore, .gitattributes or .gitmodules may
// hold before it counts as a trap.
const maxSize = 1 << 20

// trapped reports whether a file named as git's own, with info, is a
// trap: special, or a regular file over maxSize.
func trapped(info fs.FileInfo) bool {
	return info.Mode()&special != 0 || info.Mode().IsRegular() && info.Size() > maxSize
}

// Wait is how long a git command in a worktree runs before Watch first
// looks there for traps: few take longer, and the look is one walk.
const Wait = 2 * time.Second

// lookEvery is the longest Watch waits between two looks: it waits Wait
// after the first, twice as long after each next, up to this. A trap
// planted while git runs is found within it (and a walk's time), and a
// long command in a huge worktree is walked at most once in it.
const lookEvery = 30 * time.Second

// foundMax is the most traps Find returns: enough to name, and a
// container that plants millions takes no more memory here.
const foundMax = 100

// AtTop reports whether the top of the worktree at dir holds a trap: one
// lstat per name git opens there, cheap enough for every command.
func AtTop(dir string) bool {
	for _, name := range names {
		if info, err := os.Lstat(filepath.Join(dir, name)); err == nil && trapped(info) {
			return true
		}
	}
	return false
}

// Find walks the whole worktree at dir (opening nothing but directories,
// and taking the size only of files with git's names) and returns the
// traps in it, as absolute paths (the first foundMax). The walk has no
// cap on entries: git walks them all too, and one with a cap would miss a
// trap placed after as many decoys.
func Find(dir string) []string { return find(context.Background(), dir) }

// find is Find, stopping early, with what it found so far, once ctx is
// done.
func find(ctx context.Context, dir string) []string {
	var found []string
	filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if ctx.Err() != nil || len(found) == foundMax {
			return fs.SkipAll
		}
		if err != nil {
			return nil // an unreadable directory holds nothing git reads either
		}
		own := slices.Contains(names, de.Name())
		if de.Type().IsRegular() && own {
			if info, err := de.Info(); err == nil && trapped(info) {
				found = append(found, path)
			}
			return nil
		}
		if de.Type()&special == 0 {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		parents := strings.Split(filepath.Dir(rel), string(filepath.Separator))
		if own || slices.Contains(parents, ".git") {
			found = append(found, path)
		}
		return nil
	})
	return found
}

// Error is a git command that did not run, or was stopped, because its
// worktree holds traps. It exits 3.
type Error struct {
	Dir   string   // the worktree
	Traps []string // the special files, absolute
}

// In is the Error of the worktree at dir, naming all its traps.
func In(dir string) *Error { return &Error{Dir: dir, Traps: Find(dir)} }

func (e *Error) Error() string {
	rel := make([]string, len(e.Traps))
	for i, t := range e.Traps {
		rel[i], _ = filepath.Rel(e.Dir, t)
		if info, err := os.Lstat(t); err == nil && info.Mode().IsRegular() {
			rel[i] += fmt.Sprintf(" of %d bytes, more than the %d git-apex lets git read", info.Size(), maxSize)
		}
	}
	return "the worktree " + e.Dir + " holds special files where git opens files of its own (" + strings.Join(rel, ", ") +
		"): git would wait on them for ever; `git apex doctor --fix` removes them"
}

// Remove deletes the traps in the worktree at dir that Find finds, and
// returns them (absolute). It follows no link (nofollow.RemoveAll): the
// container that planted one may swap a directory above it for a link;
// so git-apex removes them itself, where an rm printed for the user to
// run would follow that link whenever it runs.
func Remove(dir string) ([]string, error) {
	found := Find(dir)
	var errs []error
	for _, t := range found {
		rel, err := filepath.Rel(dir, t)
		if err == nil {
			err = nofollow.RemoveAll(dir, rel)
		}
		errs = append(errs, err)
	}
	return found, errors.Join(errs...)
}

// ExitCode reports that a trapped worktree is a refusal (exit 3).
func (e *Error) ExitCode() int { return exitcode.Refused }

// Watch keeps a git command in the worktree dir (when on) from waiting
// for ever on a trap there: the command runs under the context Watch
// returns, which is done at once when the top of dir holds a trap, and,
// once the command has run for Wait, done as soon as a look at the whole
// worktree finds any; while it runs on, Watch looks again (see
// lookEvery), so a trap planted meanwhile is found too. trapped, called
// once the command has ended, ends the watch and returns the *Error that
// stopped the command, or nil.
func Watch(ctx context.Context, dir string, on bool) (_ context.Context, trapped func() error) {
	ctx, cancel := context.WithCancel(ctx)
	var found atomic.Pointer[Error]
	report := func() error {
		cancel()
		if e := found.Load(); e != nil {
			return e
		}
		return nil
	}
	if !on {
		return ctx, report
	}
	if AtTop(dir) {
		found.Store(In(dir))
		cancel()
		return ctx, report
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for wait := Wait; ; wait = min(2*wait, lookEvery) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if traps := find(ctx, dir); len(traps) > 0 && ctx.Err() == nil {
				found.Store(&Error{Dir: dir, Traps: traps})
				cancel()
				return
			}
		}
	}()
	return ctx, func() error { cancel(); <-done; return report() }
}
