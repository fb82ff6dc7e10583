package sandbox

import (
	"context"
	"io"

	"github.com/git-apex/git-apex/copymode"
	"github.com/git-apex/git-apex/policy"
)

// Copy mode: an engine that cannot see the host's files (another
// machine, a VM) cannot bind-mount the worktree. Its container is given
// the env's files as data instead, and gives its results back as data:
//
//   - At the start, one tar stream (the engine's archive API) holds the
//     worktree's files (all but its .git file and the submodule
//     directories), a .git file naming gitDirInside, and the private git
//     directory, which is shallow: one pack of the start commit and all
//     its tree holds, no history and no borrowed objects.
//   - After each exec and shell, a batch task kept after failing, and
//     before a removal, the commits come back as in mount mode (a
//     bundle, checked, fast-forward only), and the files the container
//     changed come back too: git in
//     the container writes the worktree's state as a tree (ignored files
//     apart), lists what changed since the tree of the last exchange, and
//     sends those files as a `git archive` tar. The host checks every
//     entry before it writes anything (copymode's checkEntry), and writes only
//     regular files and symlinks that stay inside the worktree, nothing
//     in a .git or a submodule directory.
//   - A file the user changed on the host since the last exchange is
//     never overwritten or removed: the host's stays, the container's
//     version is saved beside it as <path>.from-<identity>, and the
//     conflict is reported. What the host had is known by the stat data
//     (size, mtime, mode, inode) recorded in the manifest at each
//     exchange. Commits that would undo such a change are kept aside.
//   - Commits made on the host reach the container before the next
//     exec as data too: a pack of the objects it lacks (all of the tip's
//     tree, the tip made shallow, when the host rewrote the branch), its
//     ref, index and files moved as a fast-forward would
//     (copymode.Worktree.HandOver).

// byCopy reports whether the sandbox's container gets its files by copy:
// [container].transfer "copy", or "auto" with an engine on another
// machine.
func (s *Sandbox) byCopy(ctx context.Context, pol *policy.Policy) (bool, error) {
	switch pol.Container.Transfer {
	case "copy":
		return true, nil
	case "mount":
		return false, nil
	}
	e, err := s.on(ctx)
	if err != nil {
		return false, err
	}
	return !e.Endpoint.Local(), nil
}

// Copied reports whether the sandbox was made for copy mode.
func (s *Sandbox) Copied() bool { return copymode.Marked(s.dir) }

// copied is the sandbox's worktree as copy mode moves it.
func (s *Sandbox) copied() copymode.Worktree {
	return copymode.Worktree{Dir: s.worktree, StateDir: s.dir, Identity: s.identity, Skip: s.gitlinks(), GitEnv: s.gitEnv(),
		Limit: func(w io.Writer) io.Writer { return s.limited(w, policyOf(s.r).Container) }}
}

// CopyFiles gives the sandbox's container ctr the files at paths
// (relative to its worktree) written on the host since it was copied
// in; in mount mode it sees them already.
func (s *Sandbox) CopyFiles(ctx context.Context, ctr string, paths []string, pol *policy.Policy) error {
	if !s.Copied() {
		return nil
	}
	eng, err := s.on(ctx)
	if err != nil {
		return err
	}
	rt := eng.Runtime
	user, _, err := s.user(ctx, pol)
	if err != nil {
		return err
	}
	return s.copied().CopyFiles(ctx, rt, ctr, user, paths)
}
