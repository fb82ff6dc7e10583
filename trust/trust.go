// Package trust keeps the user's approvals of what repositories' policies
// may run on the host. Approvals live in the user's own state
// ($XDG_STATE_HOME/git-apex/trust.json), never in a repository, keyed on
// the repository's location and a hash of exactly the approved settings:
// a changed policy, or a copy of the repository elsewhere, is not approved.
// An approval also records whether the user let the policy's commands run
// on the host where the policy itself would run them only in containers
// (`git apex trust --host`).
package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// approval is one repository's approved settings.
type approval struct {
	Hash       string    `json:"hash"`
	ApprovedAt time.Time `json:"approved_at"`
	// OnHost is set when the user approved the commands on the host too,
	// beyond where the policy's own choices of mode run them.
	OnHost bool `json:"on_host,omitempty"`
}

// file is the JSON the approvals are kept in.
type file struct {
	Version   int                 `json:"version"`
	Approvals map[string]approval `json:"approvals"` // by repository
}

// Store is the user's approvals.
type Store struct {
	path string
}

// Open returns the user's store. It creates nothing until a write.
func Open() (*Store, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("cannot find where to keep approvals: %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return &Store{path: filepath.Join(dir, "git-apex", "trust.json")}, nil
}

// Approved reports whether repo's settings with this hash are approved,
// and onHost whether that approval lets their commands run on the host
// too (see Approve).
func (s *Store) Approved(repo, hash string) (approved, onHost bool, err error) {
	f, err := s.read()
	if err != nil {
		return false, false, err
	}
	a, ok := f.Approvals[repo]
	approved = ok && a.Hash == hash
	return approved, approved && a.OnHost, nil
}

// Approve records repo's settings with this hash as approved, replacing
// any earlier approval for repo. With onHost the approval lets their
// commands run on the host too, where the policy would run them only in
// full environments' containers (an environment that fell back to
// worktree, say); without it an earlier onHost is withdrawn.
func (s *Store) Approve(repo, hash string, onHost bool) error {
	return s.update(func(f *file) {
		f.Approvals[repo] = approval{Hash: hash, ApprovedAt: time.Now().UTC(), OnHost: onHost}
	})
}

// Revoke withdraws repo's approval; it reports whether there was one.
func (s *Store) Revoke(repo string) (bool, error) {
	had := false
	err := s.update(func(f *file) {
		_, had = f.Approvals[repo]
		delete(f.Approvals, repo)
	})
	return had, err
}

func (s *Store) read() (*file, error) {
	f := &file{Version: 1, Approvals: map[string]approval{}}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("cannot read approvals in %s: %v; fix or delete the file, then run `git apex trust` again", s.path, err)
	}
	if f.Approvals == nil {
		f.Approvals = map[string]approval{}
	}
	return f, nil
}

// update changes the file under a lock, writing it whole and renaming it
// into place, so concurrent updates never lose one another.
func (s *Store) update(change func(*file)) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(s.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	f, err := s.read()
	if err != nil {
		return err
	}
	change(f)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}
