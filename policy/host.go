package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// HostSettings are the parts of a policy that run on the host or reach
// into it: every command, the container's volumes and its user (a user
// other than the host's may be root, whose files in the mounted worktree
// are root's on the host), and copy globs that leave the checkout. None
// of them is used until `git apex trust` approves exactly these settings.
type HostSettings struct {
	Commands    map[string][]string `json:"commands"`     // by key, e.g. "worktree.setup"
	Volumes     map[string]string   `json:"volumes"`      // host path -> container path
	CopyOutside []string            `json:"copy_outside"` // globs that leave the checkout
	// Root is [worktree].root when it places environments outside the
	// main checkout's parent directory (absolute, or climbing above it).
	Root string `json:"root,omitempty"`
	// User is [container].user when it is not "host".
	User string `json:"user,omitempty"`
}

// HostSettings collects the policy's host settings.
func (p *Policy) HostSettings() HostSettings {
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
	for _, glob := range p.Worktree.Copy {
		if LeavesCheckout(glob) {
			h.CopyOutside = append(h.CopyOutside, glob)
		}
	}
	if root := filepath.Clean(p.Worktree.Root); filepath.IsAbs(root) || root == "../.." || strings.HasPrefix(root, "../../") {
		h.Root = p.Worktree.Root
	}
	if p.Container.User != "host" {
		h.User = p.Container.User
	}
	return h
}

// LeavesCheckout reports whether a copy glob reaches outside the main
// checkout: an absolute path, or one that climbs out with "..".
func LeavesCheckout(glob string) bool {
	clean := filepath.Clean(glob)
	return filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator))
}

// Empty reports whether there is nothing to approve.
func (h HostSettings) Empty() bool {
	return len(h.Commands) == 0 && len(h.Volumes) == 0 && len(h.CopyOutside) == 0 && h.Root == "" && h.User == ""
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
		lines = append(lines, fmt.Sprintf("container.volumes: %s -> %s", v, h.Volumes[v]))
	}
	globs := append([]string(nil), h.CopyOutside...)
	sort.Strings(globs)
	for _, g := range globs {
		lines = append(lines, "worktree.copy: "+g)
	}
	if h.Root != "" {
		lines = append(lines, "worktree.root: "+h.Root)
	}
	if h.User != "" {
		lines = append(lines, "container.user: "+h.User)
	}
	return lines
}
