package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/service"
)

// listWorktrees answers the envs of a repository (?repository=, else the
// first served), as `list --json` prints them; ?status= narrows them
// (active, preserved, destroyed, all; default: active and preserved).
func (s *server) listWorktrees(w http.ResponseWriter, r *http.Request) {
	root, err := s.pick(r.Context(), r.URL.Query().Get("repository"), false)
	if err != nil {
		writeError(w, err, "")
		return
	}
	var envs []service.Env
	err = s.withService(r.Context(), root, func(svc *service.Service) error {
		envs, err = svc.List(r.Context(), r.URL.Query().Get("status"))
		return err
	})
	if err != nil {
		writeError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, envs)
}

// getWorktree answers one env, as `list --json` prints it.
func (s *server) getWorktree(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.answer(w, http.StatusOK, func() (any, error) {
		var env *service.Env
		err := s.inRepoOf(r, id, func(svc *service.Service, _ string, _ *service.Env) error {
			var err error
			env, err = svc.Get(r.Context(), id)
			return err
		})
		return env, err
	})
}

// boolParam reads a query parameter that is a boolean, false when absent.
func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &service.FieldError{Field: name, Err: fmt.Errorf("?%s=%s is not true or false", name, v)}
	}
	return b, nil
}

// deleteWorktree removes an env with remove's safety: 409 and the reason
// for dirty or unmerged work, unless ?force=true, which also stops its
// running commands; ?deleteBranch=true deletes its branch too; ?kill=true
// ends the host's processes working in it rather than refuse.
func (s *server) deleteWorktree(w http.ResponseWriter, r *http.Request) {
	force, err := boolParam(r, "force")
	if err != nil {
		writeError(w, err, "")
		return
	}
	deleteBranch, err := boolParam(r, "deleteBranch")
	if err != nil {
		writeError(w, err, "")
		return
	}
	kill, err := boolParam(r, "kill")
	if err != nil {
		writeError(w, err, "")
		return
	}
	s.onLive(w, r, http.StatusOK, func(svc *service.Service, root, identity string) (any, error) {
		if s.runs.running(root, identity) {
			if !force {
				return nil, exitcode.New(exitcode.Refused, "commands are running in %s: wait for them, or DELETE with ?force=true to stop them", identity)
			}
			s.runs.stopRun(root, identity, errRemoved)
		}
		return svc.Remove(r.Context(), service.RemoveRequest{Identity: identity, Force: force, DeleteBranch: deleteBranch, Kill: kill})
	})
}

// finishBody is the body of POST .../finish.
type finishBody struct {
	Failed bool `json:"failed"` // the work failed: keep the env for inspection
	Kill   bool `json:"kill"`   // end the host's processes working in it rather than refuse
}

// finishWorktree ends an env's lifecycle: removed on success, preserved
// on failure, as the policy says; 409 naming the host's processes that
// work in it, unless {kill: true}. No body is {failed: false}.
func (s *server) finishWorktree(w http.ResponseWriter, r *http.Request) {
	var body finishBody
	if err := decode(r, &body); err != nil && !isEmptyBody(err) {
		writeError(w, err, "")
		return
	}
	s.onLive(w, r, http.StatusOK, func(svc *service.Service, root, identity string) (any, error) {
		if s.runs.running(root, identity) {
			return nil, exitcode.New(exitcode.Refused, "commands are running in %s: wait for them, or DELETE it with ?force=true", identity)
		}
		return svc.Finish(r.Context(), identity, body.Failed, service.EndOptions{Kill: body.Kill})
	})
}

// linkBody is the body of POST .../links.
type linkBody struct {
	Alias string `json:"alias"` // the identity to resolve to the env
}

// addLink makes an alias resolve to an env; 201 with the env.
func (s *server) addLink(w http.ResponseWriter, r *http.Request) {
	var body linkBody
	if err := decode(r, &body); err != nil {
		writeError(w, err, "")
		return
	}
	if body.Alias == "" {
		writeError(w, &service.FieldError{Field: "alias", Err: errors.New("no alias given")}, "")
		return
	}
	s.onLive(w, r, http.StatusCreated, func(svc *service.Service, root, identity string) (any, error) {
		env, err := svc.Link(r.Context(), body.Alias, identity, "")
		return env, fieldOf(err, "alias")
	})
}

// removeLink drops a link of an env; 404 when alias does not link to it.
func (s *server) removeLink(w http.ResponseWriter, r *http.Request) {
	alias := r.PathValue("alias")
	s.onLive(w, r, http.StatusOK, func(svc *service.Service, root, identity string) (any, error) {
		env, link, err := svc.Repo().Resolve(r.Context(), alias)
		if err != nil {
			return nil, fieldOf(err, "alias")
		}
		if link == nil || env.Identity != identity {
			return nil, exitcode.New(exitcode.NotFound, "%s is not a link of %s", alias, identity)
		}
		return svc.Unlink(r.Context(), alias)
	})
}

// fieldOf names field for err's usage errors.
func fieldOf(err error, field string) error {
	var fe *service.FieldError
	if errors.As(err, &fe) {
		return &service.FieldError{Field: field, Err: fe.Err}
	}
	return err
}

// onLive runs fn on the live env the path's {id} names, in its
// repository, and answers its result with status.
func (s *server) onLive(w http.ResponseWriter, r *http.Request, status int, fn func(svc *service.Service, root, identity string) (any, error)) {
	id := r.PathValue("id")
	s.answer(w, status, func() (any, error) {
		var out any
		err := s.inRepoOf(r, id, func(svc *service.Service, root string, env *service.Env) error {
			if env.Status == "destroyed" {
				return exitcode.New(exitcode.NotFound, "%s has no live environment: it was removed", id)
			}
			var err error
			out, err = fn(svc, root, env.Identity)
			return err
		})
		return out, err
	})
}
