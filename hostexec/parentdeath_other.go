//go:build !linux

package hostexec

// DieWithGit does nothing outside Linux, which alone lets a process ask
// to be signalled when its parent dies: on macOS a kill -9 of the git
// running `git apex serve` leaves the engine serving until it is stopped
// itself (kill the git-apex-engine process, or send git SIGTERM, which it
// passes on).
func DieWithGit() {}
