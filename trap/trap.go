// Package trap finds what would hold git for ever in a worktree: the
// special files (named pipes, sockets, devices) planted where git opens a
// file of its own (a .gitignore, .gitattributes or .gitmodules in any
// directory, anything inside a nested .git directory, and the HEAD or
// commondir of the git directory a nested .git file or link sends git
// to). git opens such a file like any other and waits for ever on a
// named pipe no one writes, or reads a device without end; so whatever
// plants one (a full env's container, say) could hold every git command
// run in that worktree, and the repository lock and a `git merge` with
// it. A regular one of them bigger than maxSize is a trap too: git reads
// it whole (a sparse 2 GiB .gitignore took a list 21 s and 2 GB of
// memory). So is what the look cannot see into but git can open (a
// directory git may enter but not list, one the look cannot open): the
// look never takes what it could not see for nothing there. gitx
// watches every git command it runs in an env's worktree with Watch;
// heal refuses a worktree whose top holds one.
package trap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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
// and .git files as git would follow them, and taking the size only of
// files with git's names) and returns the traps in it (the first
// foundMax). The walk has no cap on entries: git walks them all too, and
// one with a cap would miss a trap placed after as many decoys.
func Find(dir string) []Trap { return find(context.Background(), dir) }

// Error is a git command that did not run, or was stopped, because its
// worktree holds traps. It exits 3.
type Error struct {
	Dir   string // the worktree
	Traps []Trap
}

// In is the Error of the worktree at dir, naming all its traps.
func In(dir string) *Error { return &Error{Dir: dir, Traps: Find(dir)} }

// Error names each trap by its path in the worktree, quoted (the names
// are the container's, and may hold a terminal's control sequences),
// and what it is.
func (e *Error) Error() string {
	named := make([]string, len(e.Traps))
	for i, t := range e.Traps {
		rel, err := filepath.Rel(e.Dir, t.Path)
		if err != nil {
			rel = t.Path
		}
		named[i] = strconv.Quote(rel) + " (" + t.Why + ")"
	}
	return "the worktree " + e.Dir + " holds what git would wait on for ever where it opens files of its own: " + strings.Join(named, ", ") +
		"; `git apex doctor --fix` removes them"
}

// Remove deletes the traps in the worktree at dir that Find finds, and
// returns them. It follows no link (nofollow.RemoveAll): the container
// that planted one may swap a directory above it for a link; so git-apex
// removes them itself, where an rm printed for the user to run would
// follow that link whenever it runs. A directory of the user's that git
// may enter but the walk cannot list (Closed) is not deleted but opened
// (nofollow.Open), and looked into again; what the walk could not look
// at for another reason is left, an error.
func Remove(dir string) ([]Trap, error) {
	var done []Trap
	var errs []error
	for found := Find(dir); len(found) > 0; found = Find(dir) {
		opened := false
		for _, t := range found {
			rel, err := filepath.Rel(dir, t.Path)
			switch {
			case err != nil:
			case t.Why == Closed:
				if err = nofollow.Open(dir, rel); err == nil {
					opened = true
				}
			case t.Unseen:
				err = fmt.Errorf("%q is %s: look at it by hand", rel, t.Why)
			default:
				err = nofollow.RemoveAll(dir, rel)
			}
			if err == nil {
				done = append(done, t)
			}
			errs = append(errs, err)
		}
		if !opened {
			break
		}
	}
	return done, errors.Join(errs...)
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
