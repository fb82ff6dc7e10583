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

// poolStatus answers the pool's slots and totals, as `git apex pool
// status --json` prints them, once the slots whose holder died are
// reclaimed.
func (s *server) poolStatus(w http.ResponseWriter, r *http.Request) {
	s.onRepo(w, r, func(svc *service.Service) (any, error) {
		status, err := svc.PoolStatus(r.Context())
		if err != nil {
			return nil, err
		}
		return status.Report, nil
	})
}

// poolWarmBody is the body of POST /api/pool/warm: a count left out is
// the policy's.
type poolWarmBody struct {
	Size       *int `json:"size"`
	Containers *int `json:"containers"`
}

// poolWarm makes slots and warm containers, as `git apex pool warm`
// does; no body is pool warm with no flags. It answers the pool as it
// then is.
func (s *server) poolWarm(w http.ResponseWriter, r *http.Request) {
	var body poolWarmBody
	if err := decode(r, &body); err != nil && !isEmptyBody(err) {
		writeError(w, err, "")
		return
	}
	req, err := service.PoolWarmRequestOf("size", body.Size, "containers", body.Containers)
	if err != nil {
		writeError(w, err, "")
		return
	}
	s.onRepo(w, r, func(svc *service.Service) (any, error) { return svc.PoolWarm(r.Context(), req) })
}

// poolDrainBody is the body of POST /api/pool/drain.
type poolDrainBody struct {
	All  bool `json:"all"`
	Kill bool `json:"kill"`
}

// poolDrain removes the idle slots, as `git apex pool drain` does. A
// refusal (with all, the slots still held) answers the error alone: the
// idle slots are removed all the same, and GET /api/pool shows what is
// left.
func (s *server) poolDrain(w http.ResponseWriter, r *http.Request) {
	var body poolDrainBody
	if err := decode(r, &body); err != nil && !isEmptyBody(err) {
		writeError(w, err, "")
		return
	}
	s.onRepo(w, r, func(svc *service.Service) (any, error) {
		return svc.PoolDrain(r.Context(), service.PoolDrainRequest{All: body.All, Kill: body.Kill})
	})
}

// doctorCheck answers doctor's findings, as `git apex doctor --json`
// prints them; it changes nothing. Problems left are findings, not an
// error: 200 all the same.
func (s *server) doctorCheck(w http.ResponseWriter, r *http.Request) { s.doctor(w, r, false) }

// doctorFix repairs what doctor finds and is safe to repair, as `git
// apex doctor --fix` does, and answers its findings.
func (s *server) doctorFix(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if err := decode(r, &body); err != nil && !isEmptyBody(err) {
		writeError(w, err, "")
		return
	}
	s.doctor(w, r, true)
}

// doctor runs the doctor on the repository ?repository= names: it opens
// it itself (service.Doctor), since a damaged state database is one of
// what it finds.
func (s *server) doctor(w http.ResponseWriter, r *http.Request, fix bool) {
	root, err := s.pick(r.Context(), r.URL.Query().Get("repository"), false)
	if err != nil {
		writeError(w, err, "")
		return
	}
	findings, err := service.Doctor(r.Context(), root, s.opts.Repo, fix)
	if err != nil {
		writeError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, findings)
}

// trash answers what the trash holds, newest first, as `git apex restore
// --list --json` prints it.
func (s *server) trash(w http.ResponseWriter, r *http.Request) {
	s.onRepo(w, r, func(svc *service.Service) (any, error) { return svc.Trash(r.Context()) })
}

// restoreBody is the body of POST /api/trash/{id}/restore.
type restoreBody struct {
	Branch string `json:"branch"` // the branch to make the env on instead of the entry's own
}

// restore makes the env of the path's {id} again from its latest trash
// entry, as `git apex restore` does; 201 with what it made.
func (s *server) restore(w http.ResponseWriter, r *http.Request) {
	var body restoreBody
	if err := decode(r, &body); err != nil && !isEmptyBody(err) {
		writeError(w, err, "")
		return
	}
	root, err := s.pick(r.Context(), r.URL.Query().Get("repository"), false)
	if err != nil {
		writeError(w, err, "")
		return
	}
	var out *service.Restored
	err = s.withService(r.Context(), root, func(svc *service.Service) error {
		var err error
		out, err = svc.Restore(r.Context(), r.PathValue("id"), service.RestoreOptions{Branch: body.Branch})
		return err
	})
	if err != nil {
		writeError(w, err, "id")
		return
	}
	writeJSON(w, http.StatusCreated, out)
}
