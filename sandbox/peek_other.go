//go:build !linux

package sandbox

// peek reads the sandbox's tip from its ref file where openat2 can keep
// the read beneath the git directory; this system has no openat2, so it
// says it cannot (ok false) and the caller asks the container.
func (s *Sandbox) peek() (tip string, ok bool) { return "", false }
