package main

import (
	"os"
	"os/exec"
	"strings"
)

// canRunAsUser says whether a scenario can play git-apex as an
// unprivileged user (uid 2345) against the engine at host ("": the
// default): this test runs as root, setpriv is here, and the engine is a
// unix socket that its group may use, so that the user, given that group,
// reaches it.
func canRunAsUser(host string) bool {
	if os.Getuid() != 0 {
		return false
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		return false
	}
	if host == "" {
		host = os.Getenv("DOCKER_HOST")
	}
	if host == "" {
		host = "unix:///var/run/docker.sock"
	}
	sock, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		return false
	}
	info, err := os.Stat(sock)
	return err == nil && info.Mode().Perm()&0o060 == 0o060
}
