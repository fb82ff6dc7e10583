package gitx

import (
	"os"
	"path/filepath"
	"strings"
)

// RealPath resolves symlinks where it can, so /tmp and /private/tmp (or a
// symlinked home) compare equal.
func RealPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return filepath.Clean(path)
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
