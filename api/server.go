package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
)

// server is a running `git apex serve`.
type server struct {
	opts   Options
	token  string // "" on a unix socket
	socket string // the socket it listens on, removed at shutdown

	rootsMu sync.Mutex // one clone at a time, and roots as it grows
	roots   []string   // the served repositories' main working trees, real paths; clones join them

	streams    context.Context // ends the event streams at shutdown (requests in flight go on)
	endStreams context.CancelFunc
	runs       *runner
}

func newServer(ctx context.Context, opts Options) (*server, error) {
	if len(opts.Repos) == 0 {
		opts.Repos = []string{"."}
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := &server{opts: opts}
	for _, dir := range opts.Repos {
		root, err := realRoot(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("cannot serve %s: %w", dir, err)
		}
		s.roots = append(s.roots, root)
	}
	if opts.Listen != "" {
		token, err := Token(opts.TokenFile)
		if err != nil {
			return nil, err
		}
		s.token = token
	}
	s.streams, s.endStreams = context.WithCancel(context.WithoutCancel(ctx))
	s.runs = newRunner(s, opts.maxRunning())
	return s, nil
}

// served is the repositories the server serves, the first first.
func (s *server) served() []string {
	s.rootsMu.Lock()
	defer s.rootsMu.Unlock()
	return append([]string(nil), s.roots...)
}

// stop stops the running commands and waits for them to be marked.
func (s *server) stop() {
	s.endStreams()
	s.runs.stop()
}

func (s *server) notef(format string, args ...any) {
	fmt.Fprintf(s.opts.Log, "git-apex serve: "+format+"\n", args...)
}

// routes is the server's handler: every endpoint, behind the token check.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /api/openapi.json", serveOpenAPI)
	mux.HandleFunc("POST /api/developer/workflows", s.createWorkflow)
	mux.HandleFunc("GET /api/developer/workflows/{id}", s.getWorkflow)
	mux.HandleFunc("GET /api/developer/workflows/{id}/output", s.workflowOutput)
	mux.HandleFunc("GET /api/developer/worktrees", s.listWorktrees)
	mux.HandleFunc("GET /api/developer/worktrees/{id}", s.getWorktree)
	mux.HandleFunc("DELETE /api/developer/worktrees/{id}", s.deleteWorktree)
	mux.HandleFunc("POST /api/developer/worktrees/{id}/finish", s.finishWorktree)
	mux.HandleFunc("POST /api/developer/worktrees/{id}/links", s.addLink)
	mux.HandleFunc("DELETE /api/developer/worktrees/{id}/links/{alias}", s.removeLink)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("POST /api/gc", s.gc)
	mux.HandleFunc("GET /api/pool", s.poolStatus)
	mux.HandleFunc("POST /api/pool/warm", s.poolWarm)
	mux.HandleFunc("POST /api/pool/drain", s.poolDrain)
	mux.HandleFunc("GET /api/doctor", s.doctorCheck)
	mux.HandleFunc("POST /api/doctor/fix", s.doctorFix)
	mux.HandleFunc("GET /api/trash", s.trash)
	mux.HandleFunc("POST /api/trash/{id}/restore", s.restore)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, exitcode.New(exitcode.NotFound, "no such endpoint: %s %s; GET /api/openapi.json lists them", r.Method, r.URL.Path), "")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="git-apex"`)
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: errorDetail{Code: exitcode.Refused,
				Message: "missing or wrong bearer token: send Authorization: Bearer <token> (`git apex serve --print-token` prints it)"}})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		mux.ServeHTTP(w, r)
	})
}

// withService opens the repository a request names (see pick) for the
// length of fn.
func (s *server) withService(ctx context.Context, root string, fn func(*service.Service) error) error {
	r, err := repo.Open(ctx, root, s.opts.Repo)
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(service.New(r))
}

// pick returns the served repository a request names: by the path of its
// working tree (one the server serves), by URL when it may clone (a POST,
// with AllowClone), or the first when it names none.
func (s *server) pick(ctx context.Context, named string, mayClone bool) (string, error) {
	roots := s.served()
	if named == "" {
		return roots[0], nil
	}
	if isURL(named) && mayClone {
		return s.clone(ctx, named)
	}
	if isURL(named) {
		return "", &service.FieldError{Field: "repository", Err: fmt.Errorf("repository %s is a URL: only POST /api/developer/workflows clones one; name its clone by path", named)}
	}
	return service.ServedRepository(named, roots, "start it with --repo "+named+" to add it")
}

// isURL reports whether a repository is named by URL.
func isURL(s string) bool {
	return strings.Contains(s, "://") || (strings.Contains(s, ":") && !strings.HasPrefix(s, "/") && strings.Contains(s, "@"))
}

// clone returns the working tree of the repository at url, cloned once
// under the first repository's git directory (apex/clones): with a
// checkout, since an env needs a main working tree to be made from. The
// clone is served from then on, so that its envs can be found.
func (s *server) clone(ctx context.Context, url string) (string, error) {
	if !s.opts.AllowClone {
		return "", &service.FieldError{Field: "targetRepository", Err: exitcode.New(exitcode.Usage,
			"repository %s is a URL: the server clones only when started with --allow-clone", url)}
	}
	s.rootsMu.Lock()
	defer s.rootsMu.Unlock()
	home, err := gitx.Open(ctx, s.roots[0])
	if err != nil {
		return "", err
	}
	dir := repo.ClonePath(filepath.Join(home.ApexDir(), "clones"), url, false)
	if err := gitx.Clone(ctx, url, dir, false); err != nil {
		return "", fmt.Errorf("cannot clone %s: %w", url, err)
	}
	root, err := realRoot(ctx, dir)
	if err == nil && !slices.Contains(s.roots, root) {
		s.roots = append(s.roots, root)
	}
	return root, err
}

// decode reads a request's JSON body into v (service.Decode), refusing
// a body over the limit too.
func decode(r *http.Request, v any) error {
	err := service.Decode(r.Body, v)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errTooLarge
	}
	return err
}

// errTooLarge is a body over maxBody.
var errTooLarge = errors.New("the body is larger than 1 MiB")

func isEmptyBody(err error) bool { return errors.Is(err, service.ErrEmpty) }

// errorBody is the JSON of every error.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    int    `json:"code"`            // git-apex's exit code for the same failure
	Message string `json:"message"`         // what was wrong and what to do
	Field   string `json:"field,omitempty"` // the request's field at fault
}

// httpStatus maps an exit code to an HTTP status.
func httpStatus(code int) int {
	switch code {
	case exitcode.Usage:
		return http.StatusBadRequest
	case exitcode.Refused:
		return http.StatusConflict
	case exitcode.Policy:
		return http.StatusUnprocessableEntity
	case exitcode.Runtime:
		return http.StatusServiceUnavailable
	case exitcode.NotFound:
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// writeError answers with err as JSON. A FieldError's field is named:
// as idField when it is the identity and the request gave it as that
// (the path's {id}, say), else as the FieldError names it.
func writeError(w http.ResponseWriter, err error, idField string) {
	if errors.Is(err, errTooLarge) {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Error: errorDetail{Code: exitcode.Usage, Message: err.Error()}})
		return
	}
	field := ""
	var fe *service.FieldError
	if errors.As(err, &fe) {
		field = fe.Field
		if field == "identity" && idField != "" {
			field = idField
		}
	}
	code := exitcode.Of(err)
	writeJSON(w, httpStatus(code), errorBody{Error: errorDetail{Code: code, Message: err.Error(), Field: field}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
