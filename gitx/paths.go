package gitx

import (
	"os"
	"path/filepath"
	"strings"
)

// RealPath returns where path really leads, as the file system resolves
// it: every symbolic link along it is followed (so /tmp and /private/tmp,
// or a symlinked home, compare equal), and a part that does not exist
// yet is kept as written after the real path of what does exist. A
// dangling link is followed to its target all the same: a directory made
// at the path later would be made there.
func RealPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	real := string(filepath.Separator)
	rest := strings.Split(abs, string(filepath.Separator))
	for links := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			real = filepath.Dir(real)
			continue
		}
		next := filepath.Join(real, part)
		info, err := os.Lstat(next)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			real = next
			if err != nil { // nothing below a missing part can be a link
				return filepath.Join(append([]string{real}, rest...)...)
			}
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > 255 {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if filepath.IsAbs(target) {
			real = string(filepath.Separator)
		}
		rest = append(strings.Split(target, string(filepath.Separator)), rest...)
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
