package gitx

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/git-apex/git-apex/exitcode"
)

// ContainedLimit is the most time every git command git-apex runs in a
// full env's worktree takes, together, in one operation (one env's part
// of a list, one removal): a container writes there what git reads, and
// a 24-byte .gitignore (`*a*a*a*a*a*a*a*a*a*a*b`, beside a file named
// with 100 a's) keeps git's pattern matching busy for years; a
// removal held the repository lock for as long. A clean worktree of
// 300,000 files takes git status 2 to 4 s on a busy 2-core machine.
const ContainedLimit = 10 * time.Second

// bound is the deadline of the git commands in one worktree.
type bound struct {
	dir      string // the worktree
	identity string // its env, for the message
	limit    time.Duration
	deadline time.Time
}

type boundKey struct{}

// Bound is ctx under which every git command gitx runs in the worktree
// dir (the env identity's, where a container writes) ends by limit from
// now, all of them together: one that runs past it is stopped (as on
// Ctrl-C), and it and every later one there fail at once with a
// *TimeoutError. Commands elsewhere (the repository's own) are not
// bound. A ctx bound already for dir keeps its earlier deadline when
// that comes first.
func Bound(ctx context.Context, dir, identity string, limit time.Duration) context.Context {
	b := &bound{dir: dir, identity: identity, limit: limit, deadline: time.Now().Add(limit)}
	if old, ok := ctx.Value(boundKey{}).(*bound); ok && old.dir == dir && old.deadline.Before(b.deadline) {
		return ctx
	}
	return context.WithValue(ctx, boundKey{}, b)
}

// bounded is the context a git command c runs under, and its bound (nil
// when it has none).
func bounded(ctx context.Context, c command) (context.Context, context.CancelFunc, *bound) {
	b, ok := ctx.Value(boundKey{}).(*bound)
	if !ok || !c.inEnv || b.dir != c.dir {
		return ctx, func() {}, nil
	}
	ctx, cancel := context.WithDeadline(ctx, b.deadline)
	return ctx, cancel, b
}

// TimeoutError is a git command in an env's worktree that did not end
// within its Bound. It exits 3: git-apex gives up on reading the
// worktree, and changes nothing on what it could not read.
type TimeoutError struct {
	Identity string        // the env
	Dir      string        // its worktree
	Args     []string      // the command, after "git"
	Limit    time.Duration // the bound
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("git did not finish within %v in the worktree of %s (%s, `git %s`): a file its container wrote there "+
		"(a .gitignore or .gitattributes pattern, say) can keep git busy for ever; look at what it wrote, and `git apex doctor` "+
		"for what else it holds; `git apex remove --force %s` removes it without keeping its work",
		e.Limit, e.Identity, e.Dir, subcommand(e.Args), e.Identity)
}

// subcommand is git's command among args: the first that is no option
// (nor the value of a -c).
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-c":
			i++
		case !strings.HasPrefix(args[i], "-"):
			return args[i]
		}
	}
	return "git"
}

// ExitCode reports that a worktree git could not read in time is a
// refusal (exit 3).
func (e *TimeoutError) ExitCode() int { return exitcode.Refused }
