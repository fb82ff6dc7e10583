package hostexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// ErrNotFound is in the error when there is no such program: Replace's,
// and Run's when its command is not on PATH.
var ErrNotFound = exec.ErrNotFound

// Replace replaces this process with the program name, found beside this
// executable, else on PATH, given args (after its own name) and this
// process's environment. It returns only when it cannot: then with
// ErrNotFound when there is no such program.
func Replace(name string, args []string) error {
	path := ""
	if self, err := os.Executable(); err == nil {
		if beside := filepath.Join(filepath.Dir(self), name); isProgram(beside) {
			path = beside
		}
	}
	if path == "" {
		found, err := exec.LookPath(name)
		if err != nil {
			return ErrNotFound
		}
		path = found
	}
	return syscall.Exec(path, append([]string{path}, args...), os.Environ())
}

func isProgram(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}
