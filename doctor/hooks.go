package doctor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/git-apex/git-apex/hooks"
)

// hooks says whether the hooks are installed where git runs hooks, and
// whether core.hooksPath shadows ones installed elsewhere.
func (d *Doctor) hooks(ctx context.Context) []Finding {
	dir, err := d.r.Git.HooksDir(ctx)
	if err != nil {
		return []Finding{{Check: "hooks", Status: "problem", Detail: err.Error()}}
	}
	// No hook anywhere is a choice the user has not made yet: a
	// suggestion. Some hooks without the others, or hooks that
	// core.hooksPath shadows, are drift: a problem.
	var out []Finding
	if plain := filepath.Join(d.r.Git.CommonDir, "hooks"); plain != dir {
		for _, st := range hooks.Inspect(plain) {
			if st.Installed {
				out = append(out, Finding{Check: "hook " + st.Name, Status: "problem",
					Detail: fmt.Sprintf("installed at %s, which core.hooksPath shadows: git runs hooks from %s; run `git apex hooks install` again", st.Path, dir)})
			}
		}
	}
	missing := "suggestion"
	statuses := hooks.Inspect(dir)
	for _, st := range statuses {
		if st.Installed || len(out) > 0 {
			missing = "problem"
		}
	}
	for _, st := range statuses {
		status := "ok"
		detail := st.Describe()
		if !st.Installed {
			status, detail = missing, detail+"; `git apex hooks install` installs it"
		}
		out = append(out, Finding{Check: "hook " + st.Name, Status: status, Detail: detail})
	}
	return out
}
