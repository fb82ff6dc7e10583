package api

import (
	"net/http"

	"github.com/git-apex/git-apex/service"
)

// The repository's upkeep, as the command line's gc, pool, doctor and
// restore do it: each endpoint reads its request, calls the service and
// answers what it returns, the objects those commands print with --json.

// gcBody is the body of POST /api/gc: gc's flags.
type gcBody struct {
	Merged    bool   `json:"merged"`
	OlderThan string `json:"olderThan"` // 30m, 12h, 7d, 2w
	Orphans   bool   `json:"orphans"`
	DryRun    bool   `json:"dryRun"`
	Force     bool   `json:"force"`
	Kill      bool   `json:"kill"`
}

// gc removes merged and inactive envs, and with orphans repairs what git
// and the state disagree on, as `git apex gc` does; no body is gc with
// no flags. It answers the items `gc --json` prints.
func (s *server) gc(w http.ResponseWriter, r *http.Request) {
	var body gcBody
	if err := decode(r, &body); err != nil && !isEmptyBody(err) {
		writeError(w, err, "")
		return
	}
	req := service.GCRequest{Merged: body.Merged, Orphans: body.Orphans, DryRun: body.DryRun, Force: body.Force, Kill: body.Kill}
	if body.OlderThan != "" {
		d, err := service.ParseDuration("olderThan", body.OlderThan)
		if err != nil {
			writeError(w, err, "")
			return
		}
		req.OlderThan = d
	}
	s.onRepo(w, r, func(svc *service.Service) (any, error) { return svc.GC(r.Context(), req) })
}

// onRepo runs fn on the repository ?repository= names (the first served
// when none), and answers its result with 200.
func (s *server) onRepo(w http.ResponseWriter, r *http.Request, fn func(svc *service.Service) (any, error)) {
	root, err := s.pick(r.Context(), r.URL.Query().Get("repository"), false)
	if err != nil {
		writeError(w, err, "")
		return
	}
	var out any
	err = s.withService(r.Context(), root, func(svc *service.Service) error {
		out, err = fn(svc)
		return err
	})
	if err != nil {
		writeError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, out)
}
