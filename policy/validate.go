package policy

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// placeholder matches a {name} in a template.
var placeholder = lazyRegexp(`\{[^{}]*\}`)

// userSpec matches the container user settings besides "host": a name or
// uid, with an optional group.
var userSpec = lazyRegexp(`^[a-z_0-9][a-z0-9_.-]*(:[a-z_0-9][a-z0-9_.-]*)?$`)

// contextName matches a Docker context's name, as the Docker CLI allows.
var contextName = lazyRegexp(`^[a-zA-Z0-9][a-zA-Z0-9_.+-]*$`)

// validate checks what decoding cannot: ranges, names and templates.
func (p *Policy) validate() *Error {
	bad := func(key, format string, args ...any) *Error {
		return &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.Version > Version:
		return bad("version", "this policy is version %d, newer than this git-apex reads (%d): upgrade git-apex", p.Version, Version)
	case p.Version < 1:
		return bad("version", "must be %d", Version)
	}
	for _, name := range sortedKeys(p.Workflow) {
		if !workflowSyntax().MatchString(name) {
			return bad("workflow."+name, "invalid workflow name: use a lowercase letter, then lowercase letters, digits or '_'")
		}
		w := p.Workflow[name]
		if err := checkTemplate(w.Branch, "{repo} {workflow} {name} {identity}"); err != nil {
			return bad("workflow."+name+".branch", "%v", err)
		}
		if w.Base != "" {
			if err := CheckBranchName(w.Base); err != nil {
				return bad("workflow."+name+".base", "%v", err)
			}
		}
	}
	for _, name := range sortedKeys(p.Isolation.Overrides) {
		if err := p.CheckWorkflow(name); err != nil {
			return bad("isolation.overrides."+name, "%v", err)
		}
	}
	wt := p.Worktree
	if wt.Root == "" {
		return bad("worktree.root", "must not be empty")
	}
	if err := checkTemplate(wt.Root, "{repo} {workflow} {name} {identity} {branch}"); err != nil {
		return bad("worktree.root", "%v", err)
	}
	if wt.Base != "" {
		if err := CheckBranchName(wt.Base); err != nil {
			return bad("worktree.base", "%v", err)
		}
	}
	if wt.MaxActive < 0 {
		return bad("worktree.max_active", "must be 0 (no limit) or more, not %d", wt.MaxActive)
	}
	for _, glob := range wt.Copy {
		if _, err := filepath.Match(glob, ""); err != nil || glob == "" {
			return bad("worktree.copy", "invalid pattern %q", glob)
		}
	}
	c := p.Container
	if c.CPUs < 0 {
		return bad("container.cpus", "must be positive, not %g", c.CPUs)
	}
	if c.ConnectTimeout <= 0 {
		return bad("container.connect_timeout", "must be longer than 0, like \"20s\"")
	}
	if p.Trash.Keep <= 0 {
		return bad("trash.keep", "must be longer than 0, like \"14d\"")
	}
	for _, pattern := range p.Trash.KeepIgnored {
		if strings.TrimSpace(pattern) == "" || strings.ContainsAny(pattern, "\n\r\x00") || strings.HasPrefix(pattern, "#") {
			return bad("trash.keep_ignored", "invalid pattern %q: give one gitignore pattern per string, like \".env\" or \"*.local\"", pattern)
		}
	}
	if c.ExchangeTimeout <= 0 {
		return bad("container.exchange_timeout", "must be longer than 0, like \"5m\"")
	}
	if c.Transfer != "auto" && c.Transfer != "mount" && c.Transfer != "copy" {
		return bad("container.transfer", "unknown transfer %q: use \"auto\", \"mount\" or \"copy\"", c.Transfer)
	}
	if c.Network != "bridge" && c.Network != "none" {
		return bad("container.network", "unknown network %q: use \"bridge\" or \"none\"", c.Network)
	}
	if c.User != "host" && !userSpec().MatchString(c.User) {
		return bad("container.user", "invalid user %q: use \"host\", a user name or uid, with an optional \":group\"", c.User)
	}
	for _, name := range p.Batch.Engines {
		if !contextName().MatchString(name) {
			return bad("batch.engines", "invalid Docker context name %q: see `docker context ls`", name)
		}
	}
	if r := p.Requests.Remote; r != "" && (!nameSyntax().MatchString(r) || strings.HasPrefix(r, "-") || strings.Contains(r, "..")) {
		return bad("requests.remote", "invalid remote name %q: name one of the repository's remotes (`git remote`), not a URL", r)
	}
	if h := p.Requests.Host; h != "auto" && h != "github" && h != "gitlab" {
		return bad("requests.host", "unknown host %q: use \"github\", \"gitlab\" or \"auto\"", h)
	}
	if g := time.Duration(p.Remove.KillGrace); g <= 0 || g > 10*time.Minute {
		return bad("remove.kill_grace", "must be longer than 0 and at most 10m, like \"5s\"")
	}
	if p.Pool.Size < 0 || p.Pool.Size > PoolMax {
		return bad("pool.size", "must be 0 (no pool) to %d, not %d", PoolMax, p.Pool.Size)
	}
	if p.Pool.Containers < 0 || p.Pool.Containers > PoolMax {
		return bad("pool.containers", "must be 0 (no warm containers) to %d, not %d", PoolMax, p.Pool.Containers)
	}
	if p.Pool.Max < 0 || p.Pool.Max > PoolMax {
		return bad("pool.max", "must be 0 (no cap) to %d, not %d", PoolMax, p.Pool.Max)
	}
	if m := p.Pool.Max; m > 0 && (p.Pool.Size > m || p.Pool.Containers > m) {
		return bad("pool.max", "%d is fewer slots than [pool].size (%d) or [pool].containers (%d) keep: raise it, or lower them", m, p.Pool.Size, p.Pool.Containers)
	}
	return nil
}

// checkTemplate fails when template uses a placeholder not in allowed.
func checkTemplate(template, allowed string) error {
	for _, ph := range placeholder().FindAllString(template, -1) {
		if !strings.Contains(" "+allowed+" ", " "+ph+" ") {
			return fmt.Errorf("unknown placeholder %s in %q: use %s", ph, template, strings.ReplaceAll(allowed, " ", ", "))
		}
	}
	return nil
}

// expand fills a template checked by checkTemplate.
func expand(template string, values map[string]string) string {
	return placeholder().ReplaceAllStringFunc(template, func(ph string) string {
		return values[strings.Trim(ph, "{}")]
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
