package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/service"
)

// workflowRequest is the body of POST /api/developer/workflows.
type workflowRequest struct {
	ID               string            `json:"id"`       // the identity, <workflow>-<name>
	Workflow         string            `json:"workflow"` // with name, when id is not given
	Name             string            `json:"name"`     // made up when not given
	TargetRepository string            `json:"targetRepository"`
	Repository       string            `json:"repository"`
	From             string            `json:"from"`
	Isolation        string            `json:"isolation"`
	Branch           string            `json:"branch"`   // overrides the policy's branch template
	Commands         []string          `json:"commands"` // one command's argv, run in the env in the background
	Env              map[string]string `json:"env"`      // variables the commands get
	Story            string            `json:"story"`    // kept in the env's metadata
}

// The workflow's statuses: ready (no commands asked), then for commands
// queued, running, completed or failed.
const (
	ready     = "ready"
	queued    = "queued"
	running   = "running"
	completed = "completed"
	failed    = "failed"
)

// The keys of an env's metadata that hold its workflow.
const (
	metaStory    = "story"
	metaStatus   = "workflow.status"
	metaExitCode = "workflow.exit_code"
	metaLog      = "workflow.log"
	metaError    = "workflow.error"
	metaRunner   = "workflow.runner" // the server process running it: "pid:start"
)

// workflowView is a workflow as the API answers it.
type workflowView struct {
	ID           string    `json:"id"`       // as asked: the identity, or a link to it
	Identity     string    `json:"identity"` // the env's own identity
	WorktreePath string    `json:"worktreePath"`
	Branch       string    `json:"branch"`
	Mode         string    `json:"mode"`
	Status       string    `json:"status"`    // ready, queued, running, completed or failed
	EnvStatus    string    `json:"envStatus"` // the env's: active, preserved or destroyed
	ExitCode     *int      `json:"exitCode,omitempty"`
	LogPath      string    `json:"logPath,omitempty"`  // the commands' output: GET .../output answers it
	Warnings     []string  `json:"warnings,omitempty"` // what the operation warned of (a start's fallback)
	Error        string    `json:"error,omitempty"`    // why the commands did not run to their end
	Story        string    `json:"story,omitempty"`
	Repository   string    `json:"repository"`
	CreatedAt    time.Time `json:"createdAt"`
}

func viewOf(id, root string, env service.Env) workflowView {
	v := workflowView{ID: id, Identity: env.Identity, WorktreePath: env.Path, Branch: env.Branch, Mode: env.Mode,
		Status: ready, EnvStatus: env.Status, LogPath: env.Metadata[metaLog], Error: env.Metadata[metaError],
		Story: env.Metadata[metaStory], Repository: root, CreatedAt: env.CreatedAt}
	if st := env.Metadata[metaStatus]; st != "" {
		v.Status = st
	}
	if code, err := strconv.Atoi(env.Metadata[metaExitCode]); err == nil {
		v.ExitCode = &code
	}
	return v
}

// check refuses what no start would accept, naming the field.
func (req *workflowRequest) check() error {
	if len(req.Commands) > 0 {
		if err := service.CheckCommand("commands", req.Commands); err != nil {
			return err
		}
	}
	if len(req.Env) > 0 && len(req.Commands) == 0 {
		return &service.FieldError{Field: "env", Err: errors.New("env is for commands, and none were given")}
	}
	if req.TargetRepository != "" && req.Repository != "" && req.TargetRepository != req.Repository {
		return &service.FieldError{Field: "repository", Err: errors.New("repository and targetRepository name different repositories: give one")}
	}
	if req.ID == "" && req.Workflow == "" {
		if req.Name != "" {
			return &service.FieldError{Field: "workflow", Err: errors.New("name without workflow: give the workflow too, or an id")}
		}
		req.Workflow = "task"
	}
	if req.ID == "" && req.Name == "" {
		buf := make([]byte, 4)
		rand.Read(buf)
		req.Name = hex.EncodeToString(buf)
	}
	return nil
}

// createWorkflow makes or reuses the env of a workflow and starts its
// commands, if any: 201 when the env was made, 200 when it existed.
func (s *server) createWorkflow(w http.ResponseWriter, r *http.Request) {
	var req workflowRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err, "")
		return
	}
	if err := req.check(); err != nil {
		writeError(w, err, "")
		return
	}
	vars, err := service.Vars(req.Env)
	if err != nil {
		writeError(w, err, "")
		return
	}
	named := req.TargetRepository
	if named == "" {
		named = req.Repository
	}
	root, err := s.pick(r.Context(), named, true)
	if err != nil {
		writeError(w, err, "")
		return
	}
	start := service.StartRequest{Identity: req.ID, Workflow: req.Workflow, Name: req.Name, From: req.From,
		Isolation: req.Isolation, Branch: req.Branch}
	if req.Story != "" {
		start.Metadata = map[string]string{metaStory: req.Story}
	}
	var view workflowView
	status := http.StatusOK
	err = s.withService(r.Context(), root, func(svc *service.Service) error {
		res, err := svc.Start(r.Context(), start)
		if err != nil {
			return err
		}
		if res.Created() {
			status = http.StatusCreated
		}
		id := req.ID
		if id == "" {
			id = res.Env.Identity
		}
		if len(req.Commands) > 0 {
			meta, err := s.runs.submit(r.Context(), svc, root, res.Env.Identity, req.Commands, vars)
			if err != nil {
				return err
			}
			for k, v := range meta {
				res.Env.Metadata[k] = v
			}
		}
		view = viewOf(id, root, res.Env)
		view.Warnings = svc.Repo().Warnings()
		return nil
	})
	if err != nil {
		writeError(w, err, "id")
		return
	}
	writeJSON(w, status, view)
}

// getWorkflow answers a workflow's current state, as recorded: it asks
// git nothing, since orchestrators poll it.
func (s *server) getWorkflow(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.answer(w, http.StatusOK, func() (any, error) {
		var view workflowView
		err := s.inRepoOf(r, id, func(_ *service.Service, root string, env *service.Env) error {
			view = viewOf(id, root, *env)
			return nil
		})
		return view, err
	})
}

// inRepoOf runs fn with the repository of the env id names, opened once,
// and that env as recorded: in the repository the request names with
// ?repository=, else in the first served one that knows id.
func (s *server) inRepoOf(r *http.Request, id string, fn func(svc *service.Service, root string, env *service.Env) error) error {
	ctx := r.Context()
	roots := s.served()
	if named := r.URL.Query().Get("repository"); named != "" {
		root, err := s.pick(ctx, named, false)
		if err != nil {
			return err
		}
		roots = []string{root}
	}
	var err error
	for _, root := range roots {
		found := false
		err = s.withService(ctx, root, func(svc *service.Service) error {
			env, err := svc.Find(ctx, id)
			if err != nil {
				return err
			}
			found = true
			return fn(svc, root, env)
		})
		if found || exitcode.Of(err) != exitcode.NotFound {
			return err
		}
	}
	return err
}

// answer writes what fn returns: out with status, or the error.
func (s *server) answer(w http.ResponseWriter, status int, fn func() (any, error)) {
	out, err := fn()
	if err != nil {
		writeError(w, err, "id")
		return
	}
	writeJSON(w, status, out)
}

// workflowOutput answers the output of a workflow's commands so far, as
// text: their stdout and stderr, in the order written.
func (s *server) workflowOutput(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var log string
	err := s.inRepoOf(r, id, func(_ *service.Service, _ string, env *service.Env) error {
		log = env.Metadata[metaLog]
		if log == "" {
			return exitcode.New(exitcode.NotFound, "%s ran no commands: POST /api/developer/workflows with commands runs some", id)
		}
		return nil
	})
	if err != nil {
		writeError(w, err, "id")
		return
	}
	f, err := os.Open(log)
	if err != nil {
		writeError(w, exitcode.New(exitcode.NotFound, "the output of %s is gone: %v", id, err), "")
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.Copy(w, f)
}
