package service

import "context"

// The statuses a list may be narrowed to, beside those of an env.
const (
	Live = "live" // active and preserved: the default
	All  = "all"  // destroyed ones too
)

// List returns the envs of a status (Live when ""; active, preserved,
// destroyed or All), oldest first, with their links and what git says
// of the live ones.
func (s *Service) List(ctx context.Context, status string) ([]Env, error) {
	if err := CheckStatus(status); err != nil {
		return nil, err
	}
	if status == "" {
		status = Live
	}
	sc := s.startScan(ctx)
	listed, err := s.m.List(ctx, status != Live && status != "active" && status != "preserved")
	if err != nil {
		return nil, err
	}
	envs := []Env{}
	for _, l := range listed {
		if status == Live || status == All || string(l.Env.Status) == status {
			envs = append(envs, listedEnv(l))
		}
	}
	withProcesses(envs, sc.dirs, <-sc.found)
	return envs, nil
}

// Get returns the env an identity names, as List shows it: its live env,
// its own or through a link, else its latest destroyed one.
func (s *Service) Get(ctx context.Context, identity string) (*Env, error) {
	l, err := s.m.Get(ctx, identity)
	if err != nil {
		return nil, identityError(err)
	}
	env := []Env{listedEnv(l)}
	withProcesses(env, nil, nil)
	return &env[0], nil
}

// Find returns the env an identity names as it is recorded, without
// asking git: its live env, its own or through a link, else its latest
// destroyed one.
func (s *Service) Find(ctx context.Context, identity string) (*Env, error) {
	return envResult(s.r.Find(ctx, identity))
}

// Path returns the path of an identity's env, healing a moved one first.
func (s *Service) Path(ctx context.Context, identity string) (string, error) {
	path, err := s.m.Path(ctx, identity)
	return path, identityError(err)
}

// Location is what `git apex path --json` prints.
type Location struct {
	Identity string `json:"identity"` // as asked: the env's identity or a link to it
	Path     string `json:"path"`
}
