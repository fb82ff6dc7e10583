package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// testImage is the image the container scenarios use; .ci/run builds it
// with testdata/docker/build-image.sh.
const testImage = "apex-test:latest"

// testEngine is the container engine a run of the scenarios uses.
type testEngine struct {
	host string // its DOCKER_HOST; "" for the default
	// ready says whether it answers and has the test image.
	ready func() bool
}

// engines holds a testEngine per host, so that each is asked once.
var engines sync.Map

// engineAt is the engine at host (a DOCKER_HOST value).
func engineAt(host string) *testEngine {
	e := &testEngine{host: host}
	e.ready = sync.OnceValue(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := e.docker("image", "inspect", testImage)
		return exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...).Run() == nil
	})
	found, _ := engines.LoadOrStore(host, e)
	return found.(*testEngine)
}

// docker is the Docker CLI talking to the engine.
func (e *testEngine) docker(args ...string) *exec.Cmd {
	cmd := exec.Command("docker", args...)
	if e.host != "" {
		cmd.Env = append(os.Environ(), "DOCKER_HOST="+e.host)
	}
	return cmd
}

// removeContainers removes the containers git-apex made for repositories
// under dir, whatever the script left.
func (e *testEngine) removeContainers(dir string) {
	if !e.ready() {
		return
	}
	out, err := e.docker("ps", "-a", "--filter", "label=git-apex.repo", "--format", `{{.ID}} {{.Label "git-apex.repo"}}`).Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, repo, ok := strings.Cut(line, " "); ok && strings.HasPrefix(repo, dir) {
			e.docker("rm", "-f", id).Run()
		}
	}
}

// condition adds [docker] (the engine answers and has the test image),
// [bridge] (and has its default bridge network), [mount] (read-only bind
// mounts can be made) and [sshd] (an sshd the script can start).
func (e *testEngine) condition(cond string) (bool, error) {
	switch cond {
	case "docker":
		return e.ready(), nil
	case "bridge":
		return e.ready() && e.docker("network", "inspect", "bridge").Run() == nil, nil
	case "mount":
		return canMount(), nil
	case "sshd":
		return haveSSHD(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// sshdProgram is where Debian's openssh-server puts the daemon.
const sshdProgram = "/usr/sbin/sshd"

// haveSSHD says whether an sshd, an ssh and ssh-keygen are here.
func haveSSHD() bool {
	if _, err := os.Stat(sshdProgram); err != nil {
		return false
	}
	for _, name := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(name); err != nil {
			return false
		}
	}
	return true
}

// cmdSSHD starts, for this script, an sshd on a free loopback port that
// lets in the current user with a throwaway key and gives its sessions
// the script's DOCKER_HOST; puts first on PATH an ssh that uses that key
// and trusts that host; and sets SSHD_PORT and SSH_USER. Its log is
// $WORK/.sshd/log. It is stopped when the script ends:
//
//	sshd
func cmdSSHD(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sshd")
	}
	dir := ts.MkAbs(".sshd")
	ts.Check(os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	for _, key := range []string{"host_key", "user_key"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, key)).CombinedOutput(); err != nil {
			ts.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600))
	port := freePort(ts)
	config := []string{
		"Port " + port, "ListenAddress 127.0.0.1",
		"HostKey " + filepath.Join(dir, "host_key"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"StrictModes no", "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password", "LogLevel VERBOSE",
	}
	if host := ts.Getenv("DOCKER_HOST"); host != "" {
		config = append(config, "SetEnv DOCKER_HOST="+host)
	}
	ts.Check(os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(strings.Join(config, "\n")+"\n"), 0o644))
	if os.Getuid() == 0 {
		ts.Check(os.MkdirAll("/run/sshd", 0o755)) // its privilege separation directory
	}
	daemon := exec.Command(sshdProgram, "-D", "-f", filepath.Join(dir, "sshd_config"), "-E", filepath.Join(dir, "log"))
	ts.Check(daemon.Start())
	ts.Defer(func() {
		daemon.Process.Kill()
		daemon.Wait()
	})
	waitListening(ts, "127.0.0.1:"+port, filepath.Join(dir, "log"))

	clientConfig := fmt.Sprintf("Host *\n\tIdentityFile %s\n\tIdentitiesOnly yes\n\tStrictHostKeyChecking no\n\tUserKnownHostsFile /dev/null\n\tLogLevel ERROR\n",
		filepath.Join(dir, "user_key"))
	ts.Check(os.WriteFile(filepath.Join(dir, "ssh_config"), []byte(clientConfig), 0o644))
	ssh, err := exec.LookPath("ssh")
	ts.Check(err)
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %s -F %s \"$@\"\n", ssh, filepath.Join(dir, "ssh_config"))
	ts.Check(os.WriteFile(filepath.Join(dir, "bin", "ssh"), []byte(wrapper), 0o755))
	me, err := user.Current()
	ts.Check(err)
	ts.Setenv("PATH", filepath.Join(dir, "bin")+string(os.PathListSeparator)+ts.Getenv("PATH"))
	ts.Setenv("SSHD_PORT", port)
	ts.Setenv("SSH_USER", me.Username)
}

// freePort is a loopback TCP port nothing listens on now.
func freePort(ts *testscript.TestScript) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitListening waits (at most 20 s) until addr accepts connections,
// failing with the end of log when it never does.
func waitListening(ts *testscript.TestScript, addr, log string) {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	out, _ := os.ReadFile(log)
	ts.Fatalf("nothing listens on %s after 20 s; its log:\n%s", addr, out)
}
