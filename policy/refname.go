package policy

import (
	"fmt"
	"strings"
)

// CheckBranchName applies the rules of `git check-ref-format --branch` to
// a short branch name without running git, and says which rule failed.
func CheckBranchName(name string) error {
	bad := func(why string) error { return fmt.Errorf("invalid branch name %q: %s", name, why) }
	switch {
	case name == "":
		return bad("it is empty")
	case name == "@", name == "HEAD":
		return bad("it is reserved by git")
	case strings.HasPrefix(name, "-"):
		return bad("it starts with '-'")
	case strings.HasPrefix(name, "/"), strings.HasSuffix(name, "/"):
		return bad("it starts or ends with '/'")
	case strings.HasSuffix(name, "."):
		return bad("it ends with '.'")
	case strings.Contains(name, "//"):
		return bad("it contains '//'")
	case strings.Contains(name, ".."):
		return bad("it contains '..'")
	case strings.Contains(name, "@{"):
		return bad("it contains '@{'")
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return bad(fmt.Sprintf("it contains %q", c))
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return bad("a component starts with '.'")
		}
		if strings.HasSuffix(part, ".lock") {
			return bad("a component ends with '.lock'")
		}
	}
	return nil
}
