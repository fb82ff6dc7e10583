package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-apex/git-apex/hostpath"
)

// HostSettings are the parts of a policy that run on the host or reach
// into it: every command, the container's volumes and its user (a user
// other than the host's may be root, whose files in the mounted worktree
// are root's on the host), copy globs that leave the checkout, and a
// root elsewhere than in the checkout or in one directory of its own
// directly beside it (see BesideCheckout). None of them is used until `git
// apex trust` approves exactly these settings. Paths are judged by where
// the file system takes them, not by how they read: a committed symbolic
// link that leads a copy glob or the root out of bounds makes it a host
// setting, and where it leads is part of what is approved, so pointing
// the link elsewhere needs approval again.
type HostSettings struct {
	Commands map[string][]string `json:"commands"` // by key, e.g. "worktree.setup"
	Volumes  map[string]string   `json:"volumes"`  // host path -> container path
	// VolumeTargets is, for a host path of Volumes that a symbolic link
	// takes elsewhere than it reads, where it really leads.
	VolumeTargets map[string]string `json:"volume_targets,omitempty"`
	CopyOutside   []string          `json:"copy_outside"` // globs that leave the checkout
	// CopyIn are the other globs: what they match in the main checkout
	// (an untracked .env, say) a full environment copies into its
	// container, where the policy's image runs, so there they need
	// approval too (see Empty and ForFull).
	CopyIn []string `json:"copy_in,omitempty"`
	// CopyTargets is, for a glob of CopyOutside whose directory part a
	// symbolic link takes elsewhere than it reads, where it really leads.
	CopyTargets map[string]string `json:"copy_targets,omitempty"`
	// Root is [worktree].root when it places environments elsewhere than
	// BesideCheckout allows (absolute, climbing above the checkout's
	// parent, deeper or hidden there, or led there by a symbolic link).
	Root string `json:"root,omitempty"`
	// RootInside is [worktree].root when it places environments inside
	// the main checkout (the checkout itself included): git-apex closes
	// no directory there, so whoever can read the checkout reaches what
	// a full environment's container writes, and for a full environment
	// it needs approval too (see ForFull).
	RootInside string `json:"root_inside,omitempty"`
	// RootTarget is where Root really leads, when a symbolic link takes
	// it elsewhere than it reads.
	RootTarget string `json:"root_target,omitempty"`
	// User is [container].user when it is not "host".
	User string `json:"user,omitempty"`
	// Bounds are the limits the policy lifts (Policy.Bounds), by key.
	Bounds map[string]string `json:"bounds,omitempty"`
	// Where are, when there are Commands, the policy's choices of mode
	// (isolation.default, isolation.strict, each override and each
	// workflow's isolation), which decide whether a command runs in a
	// full environment's container or on the host: a commit that moves
	// approved commands out of the container needs approval again.
	Where []string `json:"where,omitempty"`
}

// HostSettings collects the policy's host settings for the main checkout
// at mainRoot (a bare repository's directory when it has none) named
// repo, resolving the paths it names with the file system (a few lstat
// calls; nothing is read).
func (p *Policy) HostSettings(mainRoot, repo string) HostSettings {
	h := HostSettings{Commands: map[string][]string{}, Volumes: p.Container.Volumes}
	add := func(key string, cmds []string) {
		if len(cmds) > 0 {
			h.Commands[key] = cmds
		}
	}
	add("worktree.setup", p.Worktree.Setup)
	for _, name := range sortedKeys(p.Workflow) {
		add("workflow."+name+".setup", p.Workflow[name].Setup)
	}
	add("hooks.post_create", p.Hooks.PostCreate)
	add("hooks.pre_remove", p.Hooks.PreRemove)
	add("hooks.post_remove", p.Hooks.PostRemove)
	for host := range p.Container.Volumes {
		if !filepath.IsAbs(host) { // a named volume
			continue
		}
		if target := hostpath.RealPath(host); target != filepath.Clean(host) {
			h.VolumeTargets = addTarget(h.VolumeTargets, host, target)
		}
	}
	checkout := hostpath.RealPath(mainRoot)
	for _, glob := range p.Worktree.Copy {
		written := filepath.Join(checkout, globDir(glob))
		if filepath.IsAbs(glob) {
			written = globDir(glob)
		}
		target := hostpath.RealPath(written)
		if LeavesCheckout(glob) || !within(target, checkout) {
			h.CopyOutside = append(h.CopyOutside, glob)
			if target != written {
				h.CopyTargets = addTarget(h.CopyTargets, glob, target)
			}
		} else {
			h.CopyIn = append(h.CopyIn, glob)
		}
	}
	written := p.EnvRoot(checkout, repo)
	target := hostpath.RealPath(written)
	if root := filepath.Clean(p.Worktree.Root); filepath.IsAbs(root) || root == "../.." || strings.HasPrefix(root, "../../") ||
		!BesideCheckout(target, checkout) {
		h.Root = p.Worktree.Root
		if target != written {
			h.RootTarget = target
		}
	} else if within(target, checkout) {
		h.RootInside = p.Worktree.Root
	}
	if p.Container.User != "host" {
		h.User = p.Container.User
	}
	h.Bounds = p.Bounds()
	if len(h.Commands) > 0 {
		h.Where = p.modeChoices()
	}
	return h
}

// modeChoices lists the policy's choices of isolation mode, one
// "key = value" each, in a fixed order.
func (p *Policy) modeChoices() []string {
	choices := []string{fmt.Sprintf("isolation.default = %s", p.Isolation.Default), fmt.Sprintf("isolation.strict = %t", p.Isolation.Strict)}
	for _, name := range sortedKeys(p.Isolation.Overrides) {
		choices = append(choices, fmt.Sprintf("isolation.overrides.%s = %s", name, p.Isolation.Overrides[name]))
	}
	for _, name := range sortedKeys(p.Workflow) {
		if m := p.Workflow[name].Isolation; m != "" {
			choices = append(choices, fmt.Sprintf("workflow.%s.isolation = %s", name, m))
		}
	}
	return choices
}

// RunsCommandsOnHost reports whether the policy's own choices of mode run
// its commands on the host in some environment: its default (worktree when
// unset), an override or a workflow's isolation is worktree or shared. An
// approval of a policy whose choices are all full covers its commands in
// containers only: an environment that falls back to worktree, or that is
// asked for in a weaker mode, is not where they were approved to run.
func (p *Policy) RunsCommandsOnHost() bool {
	if p.Isolation.Default != Full {
		return true
	}
	var modes []Mode
	for _, m := range p.Isolation.Overrides {
		modes = append(modes, m)
	}
	for _, w := range p.Workflow {
		modes = append(modes, w.Isolation)
	}
	for _, m := range modes {
		if m != "" && m != Full {
			return true
		}
	}
	return false
}

// BesideCheckout reports whether an environment root that really leads
// to target may be used without approval, for the main checkout that
// really is checkout: in the checkout, or exactly one directory directly
// in the checkout's parent whose name does not start with "." (as the
// default ../{repo}.worktrees, which is allowed for a hidden checkout
// too). Anything deeper or hidden there, for a checkout in $HOME
// ../.vim/pack/x/start or ../.config/..., is a host setting.
func BesideCheckout(target, checkout string) bool {
	if within(target, checkout) {
		return true
	}
	name := filepath.Base(target)
	return filepath.Dir(target) == filepath.Dir(checkout) &&
		(!strings.HasPrefix(name, ".") || name == filepath.Base(checkout)+".worktrees")
}

// addTarget records where a path really leads, making the map on first
// use: a policy with no symbolic link in its paths hashes as it did.
func addTarget(targets map[string]string, path, target string) map[string]string {
	if targets == nil {
		targets = map[string]string{}
	}
	targets[path] = target
	return targets
}

// LeavesCheckout reports whether a copy glob reaches outside the main
// checkout as written: an absolute path, or one that climbs out with "..".
// (Where a glob leads through symbolic links is HostSettings' to judge.)
func LeavesCheckout(glob string) bool {
	clean := filepath.Clean(glob)
	return filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator))
}

// globDir is the directory part of a glob that has no pattern in it: the
// directory its matches are looked for in, or under.
func globDir(glob string) string {
	parts := strings.Split(filepath.Clean(glob), string(filepath.Separator))
	fixed := len(parts) - 1
	for i, part := range parts {
		if strings.ContainsAny(part, `*?[\`) {
			fixed = i
			break
		}
	}
	dir := strings.Join(parts[:fixed], string(filepath.Separator))
	if dir == "" && filepath.IsAbs(glob) {
		return string(filepath.Separator)
	}
	if dir == "" {
		return "."
	}
	return dir
}

// ForFull reports whether there is something to approve for a full
// environment: anything Empty counts, the copies into its container, and
// a root inside the checkout.
func (h HostSettings) ForFull() bool { return !h.Empty() || len(h.CopyIn) > 0 || h.RootInside != "" }

// Empty reports whether there is nothing to approve for an environment
// without a container (copies from the checkout into a worktree are the
// user's own files staying on the host).
func (h HostSettings) Empty() bool {
	return len(h.Commands) == 0 && len(h.Volumes) == 0 && len(h.CopyOutside) == 0 && h.Root == "" && h.User == "" && len(h.Bounds) == 0
}

// Hash identifies exactly these settings: any change gives another hash.
func (h HostSettings) Hash() string {
	data, _ := json.Marshal(h) // maps marshal with sorted keys
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Lines describes the settings, one line each, for warnings and for
// `git apex trust`.
func (h HostSettings) Lines() []string {
	var lines []string
	keys := sortedKeys(h.Commands)
	for _, k := range keys {
		for _, c := range h.Commands[k] {
			lines = append(lines, fmt.Sprintf("%s: %s", k, c))
		}
	}
	vols := sortedKeys(h.Volumes)
	for _, v := range vols {
		lines = append(lines, fmt.Sprintf("container.volumes: %s -> %s%s", v, h.Volumes[v], leadsTo(h.VolumeTargets[v])))
	}
	globs := append([]string(nil), h.CopyOutside...)
	sort.Strings(globs)
	for _, g := range globs {
		lines = append(lines, "worktree.copy: "+g+leadsTo(h.CopyTargets[g]))
	}
	for _, g := range h.CopyIn {
		lines = append(lines, "worktree.copy (into full environments' containers): "+g)
	}
	if h.Root != "" {
		lines = append(lines, "worktree.root: "+h.Root+leadsTo(h.RootTarget))
	}
	if h.RootInside != "" {
		lines = append(lines, "worktree.root (full environments inside the checkout): "+h.RootInside)
	}
	if h.User != "" {
		lines = append(lines, "container.user: "+h.User)
	}
	for _, k := range sortedKeys(h.Bounds) {
		lines = append(lines, fmt.Sprintf("%s: %s (a bound lifted: without approval the default is used)", k, h.Bounds[k]))
	}
	if len(h.Where) > 0 {
		lines = append(lines, "where the commands run (full: in the container; worktree, shared: on the host): "+strings.Join(h.Where, ", "))
	}
	return lines
}

// leadsTo says where a path a symbolic link takes elsewhere really leads.
func leadsTo(target string) string {
	if target == "" {
		return ""
	}
	return " (a symbolic link leads it to " + target + ")"
}
