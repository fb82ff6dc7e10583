package gitx

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/git-apex/git-apex/exitcode"
)

// A trap is a special file (a named pipe, a socket, a device) where git
// opens a file of its own in a worktree: a .gitignore, .gitattributes or
// .gitmodules in any directory, or anything inside a nested .git
// directory. git opens it like a file and waits for ever on a named pipe
// no one writes, or reads a device without end; so a container (or
// anything else) that plants one could hold every git command run in
// that worktree, and the command holding the repository lock with it.

// trapNames are the files git opens in the directories of a worktree it
// walks.
var trapNames = []string{".gitignore", ".gitattributes", ".gitmodules"}

// special is what a trap is: any type that is not a file, a directory or
// a symlink.
const special = fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice | fs.ModeIrregular

// trapWait is how long a git command in a worktree runs before git-apex
// looks there for traps (a git command that takes longer than this is
// rare, and the look is one walk).
const trapWait = 2 * time.Second

// trapWalkMax is the most entries that walk visits.
const trapWalkMax = 200000

// TrapsAtTop reports whether the top of the worktree at dir holds a trap:
// one lstat per name git opens there, cheap enough for every command.
func TrapsAtTop(dir string) bool {
	for _, name := range trapNames {
		if info, err := os.Lstat(filepath.Join(dir, name)); err == nil && info.Mode()&special != 0 {
			return true
		}
	}
	return false
}

// Traps walks the worktree at dir (up to trapWalkMax entries, never
// opening anything but directories) and returns the traps in it, as
// absolute paths.
func Traps(dir string) []string {
	var found []string
	n := 0
	filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory holds nothing git reads either
		}
		if n++; n > trapWalkMax {
			return fs.SkipAll
		}
		if de.Type()&special == 0 {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		parts := strings.Split(rel, string(filepath.Separator))
		if slices.Contains(trapNames, de.Name()) || slices.Contains(parts[:len(parts)-1], ".git") {
			found = append(found, path)
		}
		return nil
	})
	return found
}

// TrapError is a git command that git-apex did not run, or stopped,
// because the worktree holds traps. It exits 3.
type TrapError struct {
	Dir   string   // the worktree
	Traps []string // the special files, absolute
}

func (e *TrapError) Error() string {
	rel := make([]string, len(e.Traps))
	for i, t := range e.Traps {
		rel[i], _ = filepath.Rel(e.Dir, t)
	}
	return "its worktree holds special files where git opens files of its own (" + strings.Join(rel, ", ") +
		"): git would wait on them for ever. Remove them with `rm " + strings.Join(e.Traps, " ") + "`"
}

// ExitCode reports that a trapped worktree is a refusal (exit 3).
func (e *TrapError) ExitCode() int { return exitcode.Refused }

// trapWatch keeps a git command that reads the worktree tree from
// waiting for ever on a trap there: once it has run for trapWait, it
// looks for traps in the whole tree and, when it finds any, cancels the
// context it returns, which the command runs under. trapped reports
// the traps that stopped it; stop ends the watch.
func trapWatch(ctx context.Context, tree string) (_ context.Context, trapped func() *TrapError, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var found atomic.Pointer[TrapError]
	watch := time.AfterFunc(trapWait, func() {
		if traps := Traps(tree); len(traps) > 0 {
			found.Store(&TrapError{Dir: tree, Traps: traps})
			cancel()
		}
	})
	return ctx, found.Load, func() { watch.Stop(); cancel() }
}
