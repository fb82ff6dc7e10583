// Package hostpath says where a path on this machine really leads (every
// symbolic link followed) and whether one lies within another: what the
// trust gate, the healing of moved worktrees and the checks of a
// worktree's .git file compare. It runs nothing and changes nothing.
package hostpath

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
)

// RealPath returns where path really leads: every symbolic link on it
// followed, a dangling one too (/tmp and /private/tmp compare equal),
// and what does not exist yet kept as written after what does (for a
// relative path, only when all of it exists).
func RealPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil || !filepath.IsAbs(path) {
		return cmp.Or(real, filepath.Clean(path))
	}
	rest, real := filepath.Clean(path), "/"
	for links, part := 0, ""; rest != ""; {
		part, rest, _ = strings.Cut(strings.TrimLeft(rest, "/"), "/")
		next := filepath.Join(real, part) // real has no link: ".." is its parent
		info, err := os.Lstat(next)
		if err != nil { // nothing below a missing part is a link
			return filepath.Join(next, rest)
		}
		if info.Mode()&os.ModeSymlink == 0 || links > 255 {
			real = next
			continue
		}
		target, _ := os.Readlink(next)
		if links++; filepath.IsAbs(target) {
			real = "/"
		}
		rest = target + "/" + rest
	}
	return real
}

// Within reports whether path is dir or below it, comparing real paths.
func Within(path, dir string) bool {
	path, dir = RealPath(path), RealPath(dir)
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Exists reports whether path exists (a dangling link counts).
func Exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// ShellQuote quotes s for sh when it holds anything but plain path
// characters, so that a command git-apex suggests with a path in it (an
// `rm` of what a container planted) stays one word, whatever the name.
func ShellQuote(s string) string {
	plain := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+@:,=", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
