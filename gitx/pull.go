package gitx

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
)

// PullRequest is a pull (GitHub) or merge (GitLab) request fetched from a
// remote.
type PullRequest struct {
	Remote string // the remote it came from
	Ref    string // its head on the remote: refs/pull/N/head or refs/merge-requests/N/head
	Head   string // the commit its head points to, fetched
	Target string // the remote's branch it merges into, when the remote says; else ""
}

// pullRefs are, per kind of host, where a remote keeps request N's head.
var pullRefs = map[string]string{
	"github": "refs/pull/%s/head",
	"gitlab": "refs/merge-requests/%s/head",
}

// RequestRemote is the remote requests come from: named (by the
// policy), which must be one of the repository's remotes (never a URL);
// else origin, else the only remote; "" when there is none. Several
// remotes and no origin is a usage error.
func (l *Locked) RequestRemote(ctx context.Context, named string) (string, error) {
	out, err := l.readIn(ctx, l.CommonDir, "remote")
	if err != nil {
		return "", err
	}
	remotes := strings.Fields(out)
	switch {
	case named != "" && slices.Contains(remotes, named):
		return named, nil
	case named != "":
		return "", exitcode.New(exitcode.Usage, "[requests].remote names %q, which is not a remote of this repository (`git remote` lists them)", named)
	case len(remotes) == 0:
		return "", nil
	case slices.Contains(remotes, "origin"):
		return "origin", nil
	case len(remotes) == 1:
		return remotes[0], nil
	}
	return "", exitcode.New(exitcode.Usage, "cannot choose a remote for pull requests among %s: set [requests].remote", strings.Join(remotes, ", "))
}

// FetchPullRequest fetches request number from remote, looking where each
// of hosts ("github", "gitlab") keeps it, in that order, into
// refs/remotes/<remote>/pr/<number>. When the remote also has GitHub's
// merge ref for it, Target is the remote branch whose tip is that merge's
// first parent. No such request is exit 7, naming the refs looked for.
func (l *Locked) FetchPullRequest(ctx context.Context, remote, number string, hosts []string) (*PullRequest, error) {
	var wanted []string
	for _, h := range hosts {
		wanted = append(wanted, fmt.Sprintf(pullRefs[h], number))
	}
	merge := fmt.Sprintf("refs/pull/%s/merge", number)
	out, err := l.runRemote(ctx, l.CommonDir, append([]string{"ls-remote", "--", remote, "refs/heads/*", merge}, wanted...)...)
	if err != nil {
		return nil, err
	}
	tips := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if hash, ref, ok := strings.Cut(line, "\t"); ok {
			tips[ref] = hash
		}
	}
	pr := &PullRequest{Remote: remote}
	for _, ref := range wanted {
		if tips[ref] != "" {
			pr.Ref = ref
			break
		}
	}
	if pr.Ref == "" {
		return nil, exitcode.New(exitcode.NotFound, "no request %s on remote %s: it has no %s", number, remote, strings.Join(wanted, " or "))
	}
	local := "refs/remotes/" + remote + "/pr/" + number
	refspecs := []string{"+" + pr.Ref + ":" + local}
	if tips[merge] != "" {
		refspecs = append(refspecs, "+"+merge+":refs/apex/pull-merge")
	}
	if _, err := l.runRemote(ctx, l.CommonDir, append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", remote}, refspecs...)...); err != nil {
		return nil, err
	}
	if pr.Head, err = l.Commit(ctx, local); err != nil {
		return nil, err
	}
	if tips[merge] == "" {
		return pr, nil
	}
	parent, perr := l.Commit(ctx, "refs/apex/pull-merge^1")
	l.runIn(ctx, l.CommonDir, "update-ref", "-d", "refs/apex/pull-merge")
	if perr != nil {
		return pr, nil
	}
	for ref, hash := range tips {
		if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok && hash == parent {
			if pr.Target != "" {
				return pr, nil // several branches there: not known
			}
			pr.Target = name
		}
	}
	return pr, nil
}
