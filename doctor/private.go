package doctor

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
)

// checkPrivate reports the directories holding what full envs' containers
// write in (each live full env's parent directory, the pool, the
// sandboxes) that other users can reach and git-apex may close
// (repo.Repo.Closable); with fix it closes them (0700).
func (d *Doctor) checkPrivate(envs []*state.Env, fix bool) []Finding {
	dirs := []string{d.pool.Dir(), sandbox.Root(d.r)}
	for _, e := range envs {
		if e.Contained() && e.Live() && !slices.Contains(dirs, filepath.Dir(e.Path)) {
			dirs = append(dirs, filepath.Dir(e.Path))
		}
	}
	var out []Finding
	for _, dir := range dirs {
		if !d.r.Closable(dir) {
			continue
		}
		f := Finding{Check: dir, Status: "problem", Detail: "other users can reach what containers write here (a set-user-id file one left); `git apex doctor --fix` closes it (0700)"}
		if fix {
			if _, err := d.r.Private(dir); err != nil {
				f.Detail = fmt.Sprintf("other users can reach what containers write here, and closing it failed: %v", err)
			} else {
				f.Status, f.Detail = "fixed", "closed to other users (0700): they could reach what containers write here"
			}
		}
		out = append(out, f)
	}
	return out
}
