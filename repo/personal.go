package repo

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/gitx"
)

// Personal is what a person chooses for themselves, apart from the
// team's committed policy: git config keys apex.* at the user or the
// repository level (`git config --global apex.editor "code -w"`).
type Personal struct {
	Editor string // apex.editor: what `git apex open` runs
	Root   string // apex.root: where new envs go (~/ is $HOME); wins over [worktree].root
	Color  string // apex.color, else color.ui: auto, always or never
	// StatusFiles are the files git's own core.excludesFile and
	// core.attributesFile name, which list's status cache watches.
	StatusFiles []string
}

// Personal reads the personal settings, once (one git process).
func (r *Repo) Personal(ctx context.Context) Personal {
	if r.personal == nil {
		values, err := gitx.ConfigValues(ctx, r.Git.MainRoot(), `^(apex\.|color\.ui$|core\.excludesfile$|core\.attributesfile$)`)
		if err != nil && ctx.Err() == nil { // an interrupt is no cause to warn
			r.Warnf("cannot read git config apex.*: %v", err)
		}
		p := readPersonal(values)
		r.personal = &p
	}
	return *r.personal
}

// homePath is a path as git reads one from its config: a leading ~/ is
// the home directory.
func homePath(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return path
}

// readPersonal is the personal settings in git config values, as
// gitx.ConfigValues returns them.
func readPersonal(values map[string]string) Personal {
	p := Personal{Editor: values["apex.editor"], Root: homePath(values["apex.root"]), Color: values["apex.color"],
		StatusFiles: []string{homePath(values["core.excludesfile"]), homePath(values["core.attributesfile"])}}
	if p.Color == "" {
		p.Color = values["color.ui"]
	}
	return p
}
