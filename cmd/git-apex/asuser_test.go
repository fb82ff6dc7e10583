package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	if err != nil {
		return false
	}
	// Ask the engine as that user, as the scenarios' `as` does: the
	// socket's mode says nothing of the directories above it.
	gid := strconv.FormatUint(uint64(info.Sys().(*syscall.Stat_t).Gid), 10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "setpriv", "--reuid=2345", "--regid=2345", "--groups="+gid,
		"docker", "-H", host, "version").Run() == nil
}
