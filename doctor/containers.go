package doctor

import (
	"context"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
)

// checkContainers reports, for each full env, a container deleted by
// hand (looked for on the engine the env was made on), an engine that
// no longer answers, and containers of the env on other engines; with
// fix it makes the deleted ones again, on their own engines.
func (d *Doctor) checkContainers(ctx context.Context, envs []*state.Env, fix bool) []Finding {
	var out []Finding
	full := map[string]*state.Env{}
	for _, e := range envs {
		if e.Mode != string(policy.Full) || !e.Live() {
			continue
		}
		full[e.Identity] = e
		rt, _, err := d.r.Engine(ctx, e.Engine)
		if err != nil {
			if e.Engine != "" { // an env made before engines were recorded has none to name
				out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: err.Error() +
					"; its container is there: make that engine answer again, or `git apex remove --force " + e.Identity + "` removes the environment and leaves its container there"})
			}
			continue
		}
		info, err := rt.Inspect(ctx, e.Container)
		st := info.State
		switch {
		case err != nil:
			out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: "cannot inspect its container: " + err.Error()})
		case st == "missing" && fix:
			if _, err := sandbox.Remake(ctx, d.r, e); err != nil {
				out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: err.Error()})
			} else {
				out = append(out, Finding{Check: e.Identity, Status: "fixed", Detail: "its container was deleted by hand; made it again"})
			}
		case st == "missing":
			out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: "its container was deleted by hand; `git apex doctor --fix` or `git apex exec` makes it again"})
		}
	}
	return append(out, d.strayContainers(ctx, envs, full)...)
}

// strayContainers finds containers of full envs on engines other than
// the one each was made on (a git-apex before engines were recorded made
// one wherever DOCKER_HOST pointed), on the engines doctor can reach:
// the repository's own and those the envs record. They are never used;
// doctor names the command that removes one, and removes none itself:
// it may hold work.
func (d *Doctor) strayContainers(ctx context.Context, envs []*state.Env, full map[string]*state.Env) []Finding {
	if len(full) == 0 {
		return nil
	}
	var out []Finding
	for _, on := range d.r.Engines(ctx, envs) {
		found, err := on.Runtime.List(ctx, map[string]string{sandbox.LabelRepo: d.r.Key()})
		if err != nil {
			out = append(out, Finding{Check: "containers on " + on.Endpoint.String(), Status: "problem", Detail: "cannot list them: " + err.Error()})
			continue
		}
		for _, c := range found {
			e := full[c.Labels[sandbox.LabelEnv]]
			if e == nil || e.Engine == "" || c.ID == e.Container {
				continue // gc --orphans reports those no env owns
			}
			made, err := container.Recorded(e.Engine)
			if err != nil || made.Address() == on.Endpoint.Address() {
				continue
			}
			out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: "a container " + c.Name + " (" + repo.Short(c.ID) + ") of it is on " +
				on.Endpoint.String() + ", not on " + made.String() + " where it was made, and is never used; look inside, then remove it with `" +
				on.Endpoint.CLI() + " rm -f " + repo.Short(c.ID) + "`"})
		}
	}
	return out
}
