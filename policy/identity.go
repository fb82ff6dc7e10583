package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/git-apex/git-apex/exitcode"
)

// Builtins are the workflows every repository has.
var Builtins = []string{"feature", "bugfix", "refactor", "issue", "pr", "review", "thread", "task"}

// IdentityBranches are the built-in workflows whose names are ids (a
// number, a hash): their branch is the whole identity unless the policy
// gives a template.
var IdentityBranches = []string{"issue", "pr", "review", "thread", "task"}

// MaxNameLen is the longest name part of an identity.
const MaxNameLen = 100

// The syntaxes are compiled on first use, not at every start.
var (
	workflowSyntax = lazyRegexp(`^[a-z][a-z0-9_]*$`)
	nameSyntax     = lazyRegexp(`^[A-Za-z0-9._-]+$`)
)

// lazyRegexp compiles a regular expression the first time it is used.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Identity names a unit of work: <workflow>-<name>, like issue-42.
// Every Identity has passed validation, so its parts are safe in a path,
// a branch name or a command line.
type Identity struct {
	Workflow string
	Name     string
}

func (id Identity) String() string { return id.Workflow + "-" + id.Name }

// NewIdentity validates a workflow and a name given separately. It checks
// syntax only; see Policy.CheckWorkflow for whether the workflow exists.
func NewIdentity(workflow, name string) (Identity, error) {
	if err := CheckWorkflowName(workflow); err != nil {
		return Identity{}, err
	}
	if err := checkName(name); err != nil {
		return Identity{}, exitcode.New(exitcode.Usage, "invalid name %q: %v", name, err)
	}
	return Identity{Workflow: workflow, Name: name}, nil
}

// CheckWorkflowName refuses (exit 2) a workflow name that no identity
// can start with.
func CheckWorkflowName(workflow string) error {
	if !workflowSyntax().MatchString(workflow) {
		return exitcode.New(exitcode.Usage, "invalid workflow %q: use a lowercase letter, then lowercase letters, digits or '_'", workflow)
	}
	return nil
}

// ParseIdentity validates "<workflow>-<name>"; the workflow part ends at
// the first '-'.
func ParseIdentity(s string) (Identity, error) {
	workflow, name, ok := strings.Cut(s, "-")
	if !ok || workflow == "" {
		return Identity{}, exitcode.New(exitcode.Usage, "invalid identity %q: write <workflow>-<name>, like feature-login or issue-42", s)
	}
	if !workflowSyntax().MatchString(workflow) {
		return Identity{}, exitcode.New(exitcode.Usage, "invalid identity %q: its workflow part %q must be a lowercase letter, then lowercase letters, digits or '_'", s, workflow)
	}
	if err := checkName(name); err != nil {
		return Identity{}, exitcode.New(exitcode.Usage, "invalid identity %q: its name part %v", s, err)
	}
	return Identity{Workflow: workflow, Name: name}, nil
}

// checkName applies the rules for the name part of an identity.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("must not be empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("is %d characters long, more than %d", len(name), MaxNameLen)
	case !nameSyntax().MatchString(name):
		return fmt.Errorf("may hold only letters, digits, '.', '_' and '-'")
	case strings.Contains(name, ".."):
		return fmt.Errorf("must not contain '..'")
	case name[0] == '-' || name[0] == '.':
		return fmt.Errorf("must not start with '-' or '.'")
	}
	return nil
}

// Workflows lists the known workflows: the built-ins, then the policy's own.
func (p *Policy) Workflows() []string {
	names := slices.Clone(Builtins)
	for _, name := range sortedKeys(p.Workflow) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// CheckWorkflow fails with a usage error, suggesting the nearest known
// name, when workflow is neither built in nor defined by the policy.
func (p *Policy) CheckWorkflow(workflow string) error {
	known := p.Workflows()
	if slices.Contains(known, workflow) {
		return nil
	}
	hint := ""
	if near := nearest(workflow, known); near != "" {
		hint = fmt.Sprintf("did you mean %q? ", near)
	}
	return exitcode.New(exitcode.Usage, "unknown workflow %q: %sknown workflows: %s (define others as [workflow.NAME] in %s)",
		workflow, hint, strings.Join(known, ", "), FileName)
}

// nearest returns the candidate closest to s by edit distance, if it is
// close enough to be a likely typo.
func nearest(s string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestDist || (strings.HasPrefix(c, s) && bestDist > 1) {
			best, bestDist = c, min(d, 1)
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
