// Package disarm makes what a container wrote in a worktree mounted into
// it harmless on the host: set-id bits cleared, the user's directories it
// closed opened again, and what the user cannot delete, or git would take
// for a git directory, named.
package disarm

import "github.com/git-apex/git-apex/hostpath"

// Result is what Tree changed in a worktree, by path relative to it.
type Result struct {
	Cleared []string // files whose set-user-id or set-group-id bit it cleared
	Opened  []string // directories of the user's it gave back read, enter and write rights to
	Closed  []string // directories it could not enter (another user's, closed to this one)
	// Foreign are the directories another user owns (root, for a
	// container run as root) that this user, not root, cannot empty:
	// not empty, and not open to this user's writes.
	Foreign []string
	// Others are the entries another user owns (a subordinate id's, from
	// a rootless engine's container), those below them apart.
	Others []string
	// Stuck are the set-id files whose bits could not be cleared
	// (another user's).
	Stuck []string
	// GitDirs are what git would take for a git directory, in any
	// directory below the top: a .git entry of any type (a FIFO too),
	// and a directory holding HEAD, objects and refs (planted.AfterExec).
	GitDirs []string
}

// Tree makes what a container wrote in the worktree it had mounted at
// dir harmless on the host, after each exec, shell and batch task and
// before a removal: a file the container made set-user-id or
// set-group-id (`chmod 4755`) is one any host user could run as its
// owner, so those bits are cleared everywhere in the worktree. With open
// it also gives the user back the directories of theirs that the
// container closed (`chmod 0`), so that a removal can delete them. It
// walks the whole worktree, never following a link, and on the way notes
// what git would take for a git directory. A copy-mode
// container's worktree needs none of it: its files are the host's own
// writes, never set-id.
func Tree(dir string, open bool) (Result, error) {
	if !hostpath.Exists(dir) {
		return Result{}, nil
	}
	return disarm(dir, open)
}
