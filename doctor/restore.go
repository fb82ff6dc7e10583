package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/intent"
	"github.com/git-apex/git-apex/trash"
	"github.com/git-apex/git-apex/words"
)

// recoverRestore finishes or undoes a restore that a killed process left
// half done (its intent in), after the start it ran, if any, was undone
// (recoverCrashes takes restores last). The entry it was putting back
// stays in the trash until the env is whole and recorded, so:
//
//   - the entry gone: the restore had finished; nothing to do;
//   - no live env of the identity: its start was cut short (and undone
//     above) or had not begun; the branch the restore made, still at the
//     entry's head and checked out nowhere, is deleted, and the entry
//     stays, for `git apex restore` to put back whole;
//   - a live env at the entry's head: the files are put back (again),
//     then recorded, and the entry dropped; but only when that overwrites
//     nothing changed since (trash.Overwrites), else it is a problem, and
//     the intent stays.
func (d *Doctor) recoverRestore(ctx context.Context, lk *gitx.Locked, in *intent.Intent) (done string, ok bool, err error) {
	entries, err := trash.List(ctx, lk, in.Identity)
	if err != nil {
		return "", false, err
	}
	var e *trash.Entry
	for i := range entries {
		if entries[i].Ref == in.Trash {
			e = &entries[i]
		}
	}
	env, err := d.r.Store.Live(ctx, in.Identity)
	switch {
	case err != nil:
		return "", false, err
	case e == nil:
		return "it had put the files back and dropped the trash entry: nothing to finish", true, nil
	case env == nil:
		done = "undid it: the work stays in the trash (`git apex restore " + in.Identity + "` brings it back)"
		if in.NewBranch {
			deleted, err := trash.DropBranch(ctx, lk, in.Branch, in.Start)
			if err != nil {
				return "", false, err
			}
			if deleted {
				done += "; deleted the branch " + in.Branch + " it had made"
			}
		}
		return done, true, nil
	}
	if head, err := lk.WorktreeHead(ctx, env.Path); err != nil || head != e.Head {
		return "", false, fmt.Errorf("%s is at %.12s, not at %.12s where its work was discarded (%v): the work stays in the trash (%s); "+
			"to put it back by hand, run `git read-tree --reset -u %s && git read-tree %s^2` in it", env.Path, head, e.Head, err, e.Ref, e.Commit, e.Commit)
	}
	lost, err := trash.Overwrites(ctx, lk, env.Path, *e)
	if err != nil {
		return "", false, err
	}
	if len(lost) > 0 {
		return "", false, fmt.Errorf("%s has files changed since it was cut short, which putting the work back would overwrite (%s): the work stays in the trash (%s); "+
			"save and undo those changes, then run `git apex doctor --fix` again", env.Path, strings.Join(lost, ", "), e.Ref)
	}
	if err := trash.Put(ctx, lk, env.Path, *e); err != nil {
		return "", false, err
	}
	if e.Base != "" && env.Base != e.Base {
		env.Base = e.Base
		if err := d.r.Store.Save(ctx, env, "restored", "base "+e.Base); err != nil {
			return "", false, err
		}
	}
	detail := "from the trash of " + e.At.UTC().Format(time.RFC3339) + ", finished by doctor after the restoring process was killed"
	if err := d.r.Store.Record(ctx, env, "restored", detail); err != nil {
		return "", false, err
	}
	if err := trash.Drop(ctx, lk, *e); err != nil {
		return "", false, err
	}
	return fmt.Sprintf("finished it: put the %s kept in the trash back in %s, and dropped the entry", words.Count(e.Files, "file"), env.Path), true, nil
}
