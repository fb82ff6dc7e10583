package service

import (
	"context"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// Env is an environment as every interface shows it: `start --json`,
// `list --json`, the HTTP API's worktrees and MCP's answers. The README
// documents it.
type Env struct {
	Identity    string            `json:"identity"`
	Workflow    string            `json:"workflow"`
	Name        string            `json:"name"`
	Mode        string            `json:"mode"`
	ModeAsked   string            `json:"mode_asked"`
	Container   string            `json:"container,omitempty"` // full envs: the container's id
	Engine      string            `json:"engine,omitempty"`    // full envs: the engine it is on (container.EngineName)
	Path        string            `json:"path"`
	Branch      string            `json:"branch"` // "" when detached
	Base        string            `json:"base"`
	StartCommit string            `json:"start_commit"`
	Status      string            `json:"status"` // active, preserved or destroyed
	Closed      bool              `json:"closed,omitempty"`
	Metadata    map[string]string `json:"metadata"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
	Links       *[]Link           `json:"links,omitempty"`  // list and get
	Git         *Git              `json:"git,omitempty"`    // list and get, live envs
	Reused      *bool             `json:"reused,omitempty"` // start
	// Processes are those working in a live env's worktree (list and
	// get): its removal refuses, or ends them with --kill.
	Processes []Process `json:"processes,omitempty"`
}

// Process is a process on this machine that works in an env: its
// directory, its root or an open file is in the worktree.
type Process struct {
	PID     int    `json:"pid"`
	Command string `json:"command"` // its command name
}

// Git is what git says of a live env.
type Git struct {
	Dirty        bool   `json:"dirty"`
	Staged       int    `json:"staged"`
	Modified     int    `json:"modified"`
	Untracked    int    `json:"untracked"`
	Ahead        *int   `json:"ahead,omitempty"`  // commits its base lacks
	Behind       *int   `json:"behind,omitempty"` // base commits it lacks
	Merged       bool   `json:"merged"`
	MergedReason string `json:"merged_reason,omitempty"`
	Container    string `json:"container,omitempty"` // full envs: the container's state
	Problem      string `json:"problem,omitempty"`   // what could not be read
	// Missing: its worktree directory is gone (moved with plain mv, or
	// deleted by hand); problem says how to repair it.
	Missing bool `json:"missing,omitempty"`
}

// Link is an identity that resolves to an env.
type Link struct {
	Alias string `json:"alias"`
	Kind  string `json:"kind"` // "link" or "parent"
}

// scan is one pass over the machine's processes for the worktrees of
// the live envs as recorded, started before git is asked about them so
// that both run at once.
type scan struct {
	dirs  map[string]bool
	found chan map[string][]hostexec.Process
}

// startScan starts the scan; with no envs recorded it looks at none.
func (s *Service) startScan(ctx context.Context) *scan {
	sc := &scan{dirs: map[string]bool{}, found: make(chan map[string][]hostexec.Process, 1)}
	envs, _ := s.r.Store.Envs(ctx, false) // an error: each env is looked at on its own
	var dirs []string
	for _, e := range envs {
		if e.Mode != string(policy.Shared) {
			sc.dirs[e.Path], dirs = true, append(dirs, e.Path)
		}
	}
	go func() { sc.found <- hostexec.Users(dirs) }()
	return sc
}

// withProcesses fills in the processes working in each live env's
// worktree from what a scan of dirs found, and, for a worktree it did not
// look at (moved since, as the list healed it), with one of its own.
func withProcesses(envs []Env, dirs map[string]bool, found map[string][]hostexec.Process) {
	for i, e := range envs {
		if e.Git == nil || e.Mode == string(policy.Shared) {
			continue // a destroyed env's path may be a live one's now; a shared one's is the main checkout
		}
		procs := found[e.Path]
		if !dirs[e.Path] {
			procs = hostexec.UsersOf(e.Path)
		}
		for _, p := range procs {
			envs[i].Processes = append(envs[i].Processes, Process{PID: p.PID, Command: p.Command})
		}
	}
}

// envOf is the view of a recorded env.
func envOf(e *state.Env) Env {
	meta := e.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	return Env{
		Identity: e.Identity, Workflow: e.Workflow, Name: e.Name, Mode: e.Mode, ModeAsked: e.ModeAsked,
		Path: e.Path, Branch: e.Branch, Base: e.Base, StartCommit: e.StartCommit, Status: string(e.Status),
		Container: e.Container, Engine: container.EngineName(e.Engine), Closed: e.IdentityClosed, Metadata: meta, CreatedAt: state.Stamp(e.CreatedAt), UpdatedAt: state.Stamp(e.UpdatedAt),
	}
}

// envResult is the result of an operation that answers one recorded env.
func envResult(e *state.Env, err error) (*Env, error) {
	if err != nil {
		return nil, identityError(err)
	}
	v := envOf(e)
	return &v, nil
}

// listedEnv is the view of a listed env, with its links and what git
// says of it.
func listedEnv(l isolation.Listed) Env {
	v := envOf(l.Env)
	links := []Link{}
	for _, link := range l.Links {
		links = append(links, Link{Alias: link.Alias, Kind: link.Kind})
	}
	v.Links = &links
	if l.Env.Live() {
		g := &Git{Merged: l.Merged != "", MergedReason: l.Merged, Problem: l.Problem, Container: l.Container, Missing: l.Missing}
		if l.Changes != nil {
			g.Dirty, g.Staged, g.Modified, g.Untracked = l.Changes.Dirty(), l.Changes.Staged, l.Changes.Modified, l.Changes.Untracked
		}
		if l.Counted {
			g.Ahead, g.Behind = &l.Ahead, &l.Behind
		}
		v.Git = g
	}

	return v
}
