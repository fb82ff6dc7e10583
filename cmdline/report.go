package cmdline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/git-apex/git-apex/doctor"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
	"github.com/git-apex/git-apex/trash"
	"github.com/git-apex/git-apex/words"
)

// What the commands say to a person, apart from their JSON: notes for
// stderr and rows for tables.

// Describe says in a few words what an env is.
func Describe(e service.Env) string {
	return fmt.Sprintf("%s on %s from %s, at %s", e.Mode, BranchOrDetached(e.Branch), e.Base, e.Path)
}

// RemovalNotes say what a removal did.
func RemovalNotes(res *service.Removal) []string {
	e := res.Env
	var notes []string
	switch {
	case res.AlreadyGone:
		notes = append(notes, e.Identity+" was already gone")
	case e.Mode == "shared":
		notes = append(notes, "removed "+e.Identity+" (shared: the main checkout was left as it is)")
	default:
		notes = append(notes, "removed "+e.Identity+": "+e.Path)
	}
	if len(res.DroppedLinks) > 0 {
		notes = append(notes, "dropped "+words.Count(len(res.DroppedLinks), "link")+" to it: "+strings.Join(res.DroppedLinks, ", "))
	}
	switch {
	case res.BranchDeleted && res.BranchTip != "":
		notes = append(notes, fmt.Sprintf("deleted branch %s (was %.12s)", e.Branch, res.BranchTip))
	case res.BranchDeleted:
		notes = append(notes, "deleted branch "+e.Branch)
	case e.Branch != "":
		notes = append(notes, "kept branch "+e.Branch+" (`git apex remove --delete-branch` deletes it too)")
	}
	if res.Trash != nil {
		notes = append(notes, TrashNote(res.Trash, ""))
	}
	for _, k := range res.KeptCommits {
		notes = append(notes, fmt.Sprintf("kept the commits of submodule %s (%s) that only the environment held in %s, as %s; restore does not bring them back: `git fetch %s %s` in the submodule does",
			k.Submodule, strings.Join(k.Held, ", "), k.GitDir, strings.Join(k.Refs, ", "), k.GitDir, k.Refs[0]))
	}
	if res.Unkept != nil {
		notes = append(notes, fmt.Sprintf("deleted what the trash cannot keep (--force --force), which restore does not bring back: %s", res.Unkept))
	}
	return notes
}

// TrashNote is the undo line of a discard that kept the entry e: the
// files it discarded into the trash, the commits only the entry holds
// now (naming the HEAD they end at), what it did not keep, and how to
// get it back. slot is the pool slot the files were changed in by hand,
// "" for an env.
func TrashNote(e *trash.Entry, slot string) string {
	what := " of uncommitted work"
	if slot != "" {
		what = " changed by hand in " + slot
	}
	var parts []string
	if e.Files > 0 || e.Commits == 0 {
		parts = append(parts, "discarded "+words.Count(e.Files, "file")+what+" into the trash")
	}
	if e.Commits > 0 {
		commits := fmt.Sprintf("kept %s that no branch or remote holds (HEAD %.12s)", words.Count(e.Commits, "commit"), e.Head)
		if len(parts) == 0 && slot != "" {
			commits += " in " + slot
		}
		if len(parts) == 0 {
			commits += " in the trash"
		}
		parts = append(parts, commits)
	}
	return fmt.Sprintf("%s%s; undo with `git apex restore %s`", strings.Join(parts, ", and "), NotKept(e), e.Identity)
}

// EndingNotes say what close or finish (what) did.
func EndingNotes(what string, end *service.Ending) []string {
	switch end.Outcome {
	case service.Removed:
		return append([]string{what}, RemovalNotes(end.Removal)...)
	case service.Preserved:
		return []string{what + "; kept its environment as preserved (" + end.Reason + ")"}
	}
	return []string{what + "; kept its environment"}
}

// EventRow is an event as a row of `git apex log`.
func EventRow(ev service.Event) []string {
	return []string{ev.CreatedAt.Local().Format("2006-01-02 15:04:05"), ev.Identity, ev.Event, ev.Detail}
}

// SlotRows are the rows of `git apex pool status`.
func SlotRows(report *pool.Report, now time.Time) [][]string {
	var rows [][]string
	for _, s := range report.Slots {
		holder := "idle"
		if s.LeasedAt != nil {
			holder = fmt.Sprintf("pid %d for %s", s.HolderPID, Age(now.Sub(*s.LeasedAt)))
		}
		warm := "-"
		switch {
		case s.WarmContainer == "":
		case s.WarmEngine == "":
			warm = repo.Short(s.WarmContainer)
		default:
			warm = repo.Short(s.WarmContainer) + " on " + s.WarmEngine
		}
		rows = append(rows, []string{s.Path, repo.Short(s.Commit), holder, warm, Age(now.Sub(s.CreatedAt))})
	}
	return rows
}

// FindingRows are the rows of `git apex doctor`.
func FindingRows(findings []doctor.Finding) [][]string {
	var rows [][]string
	for _, f := range findings {
		rows = append(rows, []string{f.Status, f.Check, f.Detail})
	}
	return rows
}

// Verdict is doctor's end: exit 3 while a problem is left; else, when
// there are suggestions, a note saying so.
func Verdict(findings []doctor.Finding) (note string, err error) {
	count := map[string]int{}
	for _, f := range findings {
		count[f.Status]++
	}
	if count["problem"] > 0 {
		return "", exitcode.New(exitcode.Refused, "%s left", words.Count(count["problem"], "problem"))
	}
	if count["suggestion"] > 0 {
		return "no problems; " + words.Count(count["suggestion"], "suggestion"), nil
	}
	return "", nil
}

// NotKept is what the note of a discard into the trash adds for what
// the entry e left out: "" when it kept everything.
func NotKept(e *trash.Entry) string {
	var parts []string
	if n := len(e.NotKept); n > 0 {
		noun := "repositories"
		if n == 1 {
			noun = "repository"
		}
		parts = append(parts, fmt.Sprintf("not the nested %s %s, which the trash cannot keep", noun, quoted(e.NotKept)))
	}
	if len(e.TooBig) > 0 {
		big := make([]string, len(e.TooBig))
		for i, b := range e.TooBig {
			big[i] = fmt.Sprintf("%q (%s)", b.Path, words.Size(b.Size))
		}
		parts = append(parts, fmt.Sprintf("not kept, deleted: %s, over the trash's cap of %s per file", strings.Join(big, ", "), words.Size(trash.MaxFile)))
	}
	if n := len(e.OverTotal); n > 0 {
		over := make([]string, min(n, maxNamed))
		for i := range over {
			over[i] = fmt.Sprintf("%q (%s)", e.OverTotal[i].Path, words.Size(e.OverTotal[i].Size))
		}
		if n > maxNamed {
			over = append(over, fmt.Sprintf("and %d more", n-maxNamed))
		}
		parts = append(parts, fmt.Sprintf("%s not kept, deleted: %s, past the trash's cap of %s for all the files of one removal",
			words.Count(n, "file"), strings.Join(over, ", "), words.Size(trash.MaxTotal)))
	}
	if n := len(e.IgnoredNotKept); n > 0 {
		names := quoted(e.IgnoredNotKept[:min(n, maxNamed)])
		if n > maxNamed {
			names += fmt.Sprintf(", and %d more", n-maxNamed)
		}
		parts = append(parts, fmt.Sprintf("%s not kept, deleted: %s; see [trash].keep_ignored",
			words.Count(n, "ignored file"), names))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// quoted is paths quoted (the worktree's names, which a container may
// choose with a terminal's control sequences in them), joined with
// commas.
func quoted(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = strconv.Quote(p)
	}
	return strings.Join(q, ", ")
}

// maxNamed is how many ignored paths not kept an undo line names.
const maxNamed = 5

// TrashRows are the rows of `git apex restore --list`.
func TrashRows(entries []trash.Entry) [][]string {
	var rows [][]string
	for _, e := range entries {
		files := words.Count(e.Files, "file")
		if e.Commits > 0 {
			files += ", " + words.Count(e.Commits, "commit")
		}
		rows = append(rows, []string{e.Identity, e.At.Local().Format("2006-01-02 15:04:05"), files, BranchOrDetached(e.Branch), e.Path})
	}
	return rows
}

// RestoreNotes say what a restore did.
func RestoreNotes(res *service.Restored) []string {
	notes := []string{"restored " + res.Env.Identity + ": " + Describe(res.Env)}
	switch {
	case res.BranchRecreated && res.Env.Branch == "" && res.From.Tip != "":
		notes = append(notes, fmt.Sprintf("made branch %s again at %.12s, its tip; HEAD is back at %.12s, detached off it, as it was", res.From.Branch, res.From.Tip, res.From.Head))
	case res.BranchRecreated && res.Env.Branch == res.From.Branch:
		notes = append(notes, fmt.Sprintf("made branch %s again at %.12s", res.Env.Branch, res.From.Head))
	case res.BranchRecreated:
		notes = append(notes, fmt.Sprintf("made branch %s at %.12s", res.Env.Branch, res.From.Head))
	}
	return notes
}
