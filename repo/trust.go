package repo

import (
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trust"
)

// trustStore opens the user's approvals.
func (r *Repo) trustStore() (*trust.Store, error) {
	if r.trust == nil {
		store, err := trust.Open()
		if err != nil {
			return nil, err
		}
		r.trust = store
	}
	return r.trust, nil
}

// Trusted reports whether the policy's host settings are approved for
// this repository; settings with nothing in them need no approval.
func (r *Repo) Trusted(pol *policy.Policy) (bool, policy.HostSettings, error) {
	return r.trusted(pol, false)
}

// TrustedFull is Trusted for a full environment, where the policy's
// copies from the checkout into the container need approval too.
func (r *Repo) TrustedFull(pol *policy.Policy) (bool, policy.HostSettings, error) {
	return r.trusted(pol, true)
}

// trusted is Trusted, and with full TrustedFull.
func (r *Repo) trusted(pol *policy.Policy, full bool) (bool, policy.HostSettings, error) {
	ok, _, host, err := r.lookup(pol, full)
	return ok, host, err
}

// lookup finds the approval of the policy's host settings (full as for
// TrustedFull), and whether it covers their commands on the host too
// (see TrustedOnHost).
func (r *Repo) lookup(pol *policy.Policy, full bool) (approved, onHost bool, host policy.HostSettings, err error) {
	host = pol.HostSettings(r.Git.MainRoot(), r.Git.Name)
	if host.Empty() && !(full && host.ForFull()) {
		return true, true, host, nil
	}
	store, err := r.trustStore()
	if err != nil {
		return false, false, host, err
	}
	approved, onHost, err = store.Approved(r.Key(), host.Hash())
	return approved, onHost || approved && pol.RunsCommandsOnHost(), host, err
}

// TrustedOnHost reports whether the policy's commands may run on the
// host, in a worktree or shared environment: they are approved, and the
// approval covers the host. It does when the policy's own choices of
// mode run them on the host somewhere (policy.RunsCommandsOnHost), or when
// the user approved them there (`git apex trust --host`); a policy whose
// choices are all full was approved for its containers only, and an
// environment that fell back from full must not run them where no one
// approved them. A policy with no commands needs nothing.
func (r *Repo) TrustedOnHost(pol *policy.Policy) (bool, policy.HostSettings, error) {
	_, onHost, host, err := r.lookup(pol, false)
	if len(host.Commands) == 0 {
		return err == nil, host, err
	}
	return onHost, host, err
}

// Key names this repository in the user's approvals and on its
// containers: where its git directory really is, so a copy elsewhere is
// another repository.
func (r *Repo) Key() string { return hostpath.RealPath(r.Git.CommonDir) }

// WarnUntrusted says what the policy would run and how to approve it.
func (r *Repo) WarnUntrusted(host policy.HostSettings) {
	r.Warnf("not running or using these settings of the policy until you approve them with `git apex trust`:\n  %s",
		strings.Join(host.Lines(), "\n  "))
}

// WarnNotOnHost says that commands approved for full environments'
// containers only are not run on the host for env, which is not in one,
// and how to approve them there.
func (r *Repo) WarnNotOnHost(env *state.Env, commands []string) {
	how := "is in " + env.Mode + " isolation"
	if env.ModeAsked != "" && env.ModeAsked != env.Mode {
		how = "asked for " + env.ModeAsked + " isolation but got " + env.Mode
	}
	r.Warnf("%s %s, on the host: not running these commands of the policy there, which you approved to run in full environments' containers only:\n  %s\nreview them, and the files they run, then run `git apex trust --host` to let them run on the host too",
		env.Identity, how, strings.Join(commands, "\n  "))
}

// Trust approves the policy's host settings for this repository, or with
// revoke withdraws the approval; with onHost the approval lets the
// policy's commands run on the host too (see TrustedOnHost). It returns
// the settings approved (none when there is nothing to approve) and, for
// revoke, whether there was an approval to withdraw.
func (r *Repo) Trust(revoke, onHost bool) (host policy.HostSettings, had bool, err error) {
	store, err := r.trustStore()
	if err != nil {
		return host, false, err
	}
	if revoke {
		had, err = store.Revoke(r.Key())
		return host, had, err
	}
	pol, err := r.Policy()
	if err != nil {
		return host, false, err
	}
	host = pol.HostSettings(r.Git.MainRoot(), r.Git.Name)
	if !host.ForFull() {
		return host, false, nil
	}
	return host, false, store.Approve(r.Key(), host.Hash(), onHost)
}

// CheckEnvPath refuses (exit 3) an env at path when the policy's
// [worktree].root places it elsewhere than in the main checkout or in one
// not hidden directory directly beside it (policy.BesideCheckout), until
// `git apex trust` approves it: a policy from a clone must not write
// wherever it likes (for a checkout in $HOME, ../.vim/pack/x/start would
// be vim's plugins). Where the path really leads is what counts: a
// committed symbolic link on the way (`envs -> ../../home/.vim`) counts
// as written there, and a path that a link below the approved root
// takes elsewhere, into the repository's git directory or onto the main
// checkout, is refused even when trusted. With personal set, the root is
// the user's own apex.root: it needs no approval, but a link in the main
// checkout must not take it elsewhere either. With full set (a full env),
// a root inside the main checkout needs approval too (see
// policy.HostSettings.RootInside).
func (r *Repo) CheckEnvPath(pol *policy.Policy, path string, personal, full bool) error {
	mainRoot := r.Git.MainRoot()
	checkout := hostpath.RealPath(mainRoot)
	parent := filepath.Dir(checkout)
	real := hostpath.RealPath(path)
	if hostpath.Within(real, r.Git.CommonDir) || real == checkout {
		return exitcode.New(exitcode.Refused, "cannot start at %s: a symbolic link leads it to %s, inside the repository's git directory or onto the main checkout: remove the link from the checkout",
			path, real)
	}
	if personal {
		if rel, err := filepath.Rel(mainRoot, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !hostpath.Within(real, checkout) {
			return exitcode.New(exitcode.Refused, "cannot start at %s: a symbolic link in the main checkout leads it to %s: remove the link, or choose another apex.root",
				path, real)
		}
		return nil
	}
	host := pol.HostSettings(mainRoot, r.Git.Name)
	if full && host.RootInside != "" {
		trusted, _, err := r.TrustedFull(pol)
		if err != nil {
			return err
		}
		if !trusted {
			return exitcode.New(exitcode.Refused, "cannot start at %s: [worktree].root = %q in %s places full environments inside the main checkout %s, where whoever can read the checkout reaches the container's output, which needs your approval: review the policy, then run `git apex trust`",
				path, pol.Worktree.Root, pol.File, checkout)
		}
	}
	if host.Root == "" {
		free := hostpath.RealPath(pol.EnvRoot(checkout, r.Git.Name))
		if hostpath.Within(real, checkout) || hostpath.Within(real, free) {
			return nil
		}
		return exitcode.New(exitcode.Refused, "cannot start at %s: a symbolic link leads it to %s, outside %s and %s: remove the link from the checkout",
			path, real, checkout, free)
	}
	trusted, _, err := r.Trusted(pol)
	if err != nil {
		return err
	}
	if !trusted {
		return exitcode.New(exitcode.Refused, "cannot start at %s: [worktree].root = %q in %s places environments elsewhere than in the main checkout or in one directory directly in %s whose name does not start with \".\"%s, which needs your approval: review the policy, then run `git apex trust`",
			path, pol.Worktree.Root, pol.File, parent, linkNote(path, real))
	}
	approved := host.RootTarget
	if approved == "" {
		approved = pol.EnvRoot(checkout, r.Git.Name)
	}
	if hostpath.Within(real, parent) || hostpath.Within(real, approved) {
		return nil
	}
	return exitcode.New(exitcode.Refused, "cannot start at %s: a symbolic link leads it to %s, outside %s and outside the [worktree].root you approved (%s): remove the link from the checkout",
		path, real, parent, approved)
}

// linkNote says where a symbolic link leads path, when one does.
func linkNote(path, real string) string {
	if real == filepath.Clean(path) {
		return ""
	}
	return " (a symbolic link leads " + path + " to " + real + ")"
}

// TrustReport is what `git apex trust --json` prints.
type TrustReport struct {
	Repository string   `json:"repository"` // the main checkout
	Approved   bool     `json:"approved"`   // the current settings are approved (or need no approval)
	Revoked    bool     `json:"revoked"`    // an approval was withdrawn
	Settings   []string `json:"settings"`   // what the approval covers
	// OnHost reports whether the approved commands may run on the host,
	// in a worktree or shared environment (one that fell back from full
	// included): the policy runs them there itself, or --host said so.
	OnHost bool `json:"on_host"`
}
