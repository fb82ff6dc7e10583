package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
)

// Mode resolves the isolation mode asked for a workflow, first that
// applies: the --isolation flag (flag, "" when not given),
// [workflow.X].isolation, [isolation.overrides].X, [isolation].default,
// then worktree.
func (p *Policy) Mode(workflow string, flag Mode) Mode {
	for _, m := range []Mode{flag, p.Workflow[workflow].Isolation, p.Isolation.Overrides[workflow], p.Isolation.Default} {
		if m != "" {
			return m
		}
	}
	return Worktree
}

// strength orders the modes, weakest first.
var strength = map[Mode]int{Shared: 0, Worktree: 1, Full: 2}

// CheckMode refuses (exit 2) a mode asked for a workflow (flag: the
// --isolation flag or the API's and MCP's isolation) that is weaker than
// the policy's own when [isolation].strict is set: a strict policy is
// the policy, and only a stronger mode may be asked.
func (p *Policy) CheckMode(workflow string, flag Mode) error {
	own := p.Mode(workflow, "")
	if !p.Isolation.Strict || flag == "" || strength[flag] >= strength[own] {
		return nil
	}
	return exitcode.New(exitcode.Usage, "cannot start in %s isolation: the policy (%s) asks for %s with [isolation].strict = true, which allows no weaker mode; ask for %s, or leave the isolation out",
		flag, p.File, own, own)
}

// Base returns the base the policy names for a workflow:
// [workflow.X].base, else [worktree].base, else "" (the caller then asks
// git for the remote's default branch or the main checkout's branch).
func (p *Policy) Base(workflow string) string {
	if b := p.Workflow[workflow].Base; b != "" {
		return b
	}
	return p.Worktree.Base
}

// Branch returns the branch for an identity: [workflow.X].branch
// expanded; else, for the built-in workflows whose names are ids
// (IdentityBranches), the identity itself (issue-42), so that pr 99 and
// issue 99 never want one branch; else the name (feature x makes x). The
// result must be a valid branch name.
func (p *Policy) Branch(id Identity, repo string) (string, error) {
	branch := id.Name
	if slices.Contains(IdentityBranches, id.Workflow) {
		branch = id.String()
	}
	if tmpl := p.Workflow[id.Workflow].Branch; tmpl != "" {
		branch = expand(tmpl, templateValues(id, repo, ""))
	}
	if err := CheckBranchName(branch); err != nil {
		return "", exitcode.New(exitcode.Usage, "cannot use %s: %v", id, err)
	}
	return branch, nil
}

// EnvPath returns where an identity's environment lives: the expanded
// root (the user's apex.root, or [worktree].root when that is ""),
// relative to the main checkout (a bare repository's directory when it
// has none), joined with the identity; repo is the repository's name
// ({repo}). It refuses a path inside the repository's git directory.
func (p *Policy) EnvPath(root, mainRoot, repo, commonDir string, id Identity, branch string) (string, error) {
	if root == "" {
		root = p.Worktree.Root
	}
	root = expand(root, templateValues(id, repo, branch))
	if !filepath.IsAbs(root) {
		root = filepath.Join(mainRoot, root)
	}
	path := filepath.Join(root, id.String())
	if within(path, commonDir) || path == filepath.Clean(mainRoot) {
		return "", &Error{File: p.fileName(), Key: "worktree.root",
			Msg: "puts " + id.String() + " at " + path + ", inside the repository's git directory or on the main checkout; choose a directory outside them"}
	}
	return path, nil
}

func (p *Policy) fileName() string {
	if p.File == "" {
		return "(built-in defaults)"
	}
	return p.File
}

// templateValues are the values a template may use. Each comes from a
// validated identity or the repository's directory name.
func templateValues(id Identity, repo, branch string) map[string]string {
	return map[string]string{
		"repo": repo, "workflow": id.Workflow, "name": id.Name,
		"identity": id.String(), "branch": branch,
	}
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// EnvRoot is the directory envs are made under: the policy's root up to
// its first placeholder other than {repo}, for the main checkout (or
// bare repository) at mainRoot named repo.
func (p *Policy) EnvRoot(mainRoot, repo string) string {
	root := strings.ReplaceAll(p.Worktree.Root, "{repo}", repo)
	if i := strings.IndexByte(root, '{'); i >= 0 {
		root = filepath.Dir(root[:i] + "x")
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(mainRoot, root)
	}
	return filepath.Clean(root)
}
