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
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// testImage is the image the container scenarios use; .ci/run builds it
// with testdata/docker/build-image.sh.
const testImage = "apex-test:latest"

// testEngine is the container engine a run of the scenarios uses.
type testEngine struct {
	host  string // its DOCKER_HOST; "" for the default
	certs string // its DOCKER_CERT_PATH when it asks for TLS; "" when not
	// ready says whether it answers and has the test image.
	ready func() bool
}

// engines holds a testEngine per host, so that each is asked once.
var engines sync.Map

// engineAt is the engine at host (a DOCKER_HOST value).
func engineAt(host string) *testEngine {
	e := &testEngine{host: host}
	e.ready = sync.OnceValue(func() bool {
		// Generous: on a busy machine an engine that answers can take
		// seconds, and a wrong "no" skips (or, for podman, fails) a run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	if e.certs != "" {
		cmd.Env = append(cmd.Env, "DOCKER_TLS_VERIFY=1", "DOCKER_CERT_PATH="+e.certs)
	}
	return cmd
}

// waitAnswering waits up to 30 s for the engine, the daemon what, to
// answer; else it returns an error with the daemon's log.
func (e *testEngine) waitAnswering(what, log string) error {
	for deadline := time.Now().Add(30 * time.Second); e.docker("version").Run() != nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log)
			return fmt.Errorf("%s at %s does not answer; its log:\n%s", what, e.host, out)
		}
	}
	return nil
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
		// Under dir itself: the scenario pool's $WORK is a prefix of
		// pool_containers' too.
		if id, repo, ok := strings.Cut(line, " "); ok && strings.HasPrefix(repo, dir+string(filepath.Separator)) {
			e.docker("rm", "-f", id).Run()
		}
	}
}

// condition adds [docker] (the engine answers and has the test image),
// [bridge] (and has its default bridge network), [mount] (read-only bind
// mounts can be made), [sshd] (an sshd the script can start),
// [dockerd] (a private dockerd the script can start), [rootless] (a
// rootless podman the script can start: cmdRootless), [root] (the
// test runs as root, and may give files to other users), [ownengine]
// (the engine is a rootless one this test's user runs, as
// TestScriptsOnRootlessPodman gives it) and [asuser]
// (git-apex can be run as uid 2345 against the engine: canRunAsUser).
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
	case "dockerd":
		return haveDockerd(), nil
	case "rootless":
		return haveRootless(), nil
	case "root":
		return os.Getuid() == 0, nil
	case "ownengine":
		return e.ready() && e.ownedByMe(), nil
	case "asuser":
		return e.ready() && canRunAsUser(e.host), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// ownedByMe says whether the engine is a unix socket of this process's
// user, not root: a rootless engine this user runs.
func (e *testEngine) ownedByMe() bool {
	path, ok := strings.CutPrefix(e.host, "unix://")
	if !ok || os.Getuid() == 0 {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && info.Sys().(*syscall.Stat_t).Uid == uint32(os.Getuid())
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

// makeCerts makes, with openssl, an authority (dir/client/ca.pem), a
// certificate for a server at 127.0.0.1 (dir/server-{cert,key}.pem) and
// one for a client (dir/client/{cert,key}.pem), all signed by it.
func makeCerts(ts *testscript.TestScript, dir string) {
	script := `set -e
cd "$1"; mkdir client
key() { openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
key ca-key.pem
openssl req -x509 -new -key ca-key.pem -out client/ca.pem -days 1 -subj /CN=apex-test-ca
sign() { # name, key, cert, extensions
	key "$2"
	openssl req -new -key "$2" -out "$1.csr" -subj "/CN=$1"
	printf '%s
' "$4" > "$1.ext"
	openssl x509 -req -in "$1.csr" -CA client/ca.pem -CAkey ca-key.pem -CAcreateserial -out "$3" -days 1 -extfile "$1.ext" 2>/dev/null
}
sign server server-key.pem server-cert.pem "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth"
sign client client/key.pem client/cert.pem "extendedKeyUsage=clientAuth"`
	if out, err := exec.Command("sh", "-c", script, "sh", dir).CombinedOutput(); err != nil {
		ts.Fatalf("making the certificates: %v\n%s", err, out)
	}
}

// daemons holds how to stop each script's dockerds, by $WORK and name.
var daemons sync.Map

// cmdStopDockerd stops a dockerd the script started, as its host would
// (SIGTERM: it stops its containers, then ends), while the script goes
// on:
//
//	stopdockerd REMOTE_DOCKER
func cmdStopDockerd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stopdockerd NAME")
	}
	stop, ok := daemons.Load(ts.Getenv("WORK") + "\x00" + args[0])
	if !ok {
		ts.Fatalf("no dockerd %s was started", args[0])
	}
	stop.(func())()
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

// haveDockerd says whether a private dockerd can be started here: the
// program, ip (its bridge), root, and mounts (its own mount namespace).
func haveDockerd() bool {
	_, err1 := exec.LookPath("dockerd")
	_, err2 := exec.LookPath("ip")
	return err1 == nil && err2 == nil && canMount()
}

// cmdDockerd starts, for this script, a private dockerd listening on a
// free loopback TCP port, with its own data root and bridge, gives it
// the test image (from the script's engine), and sets the variable NAME
// to its address. With hide, it runs in a mount namespace of its own in
// which $WORK is an empty tmpfs: it cannot see the script's files, as an
// engine on another machine cannot. It and its containers are gone when
// the script ends. With tls, it asks every client for a certificate
// signed by an authority made for it, and NAME_CERTS names a directory
// with that authority (ca.pem) and a client's certificate and key
// (cert.pem, key.pem):
//
//	dockerd REMOTE_DOCKER hide
//	dockerd SECURE_DOCKER tls
func cmdDockerd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] != "hide" && args[1] != "tls") {
		ts.Fatalf("usage: dockerd NAME [hide|tls]")
	}
	option := ""
	if len(args) == 2 {
		option = args[1]
	}
	dir, err := os.MkdirTemp("", "apex-dockerd-")
	ts.Check(err)
	port := freePort(ts)
	host := "tcp://127.0.0.1:" + port
	// A bridge of its own: with --bridge=none, dockerd deletes the
	// docker0 of the network namespace it shares with the script's engine.
	bridge := "apexbr" + port
	if out, err := exec.Command("ip", "link", "add", bridge, "type", "bridge").CombinedOutput(); err != nil {
		ts.Fatalf("ip link add %s: %v\n%s", bridge, err, out)
	}
	ts.Defer(func() { exec.Command("ip", "link", "del", bridge).Run() })
	argv := []string{"dockerd", "--host", host, "--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"), "--iptables=false", "--bridge=" + bridge}
	certs := filepath.Join(dir, "client")
	if option == "tls" {
		makeCerts(ts, dir)
		argv = append(argv, "--tlsverify", "--tlscacert", filepath.Join(certs, "ca.pem"),
			"--tlscert", filepath.Join(dir, "server-cert.pem"), "--tlskey", filepath.Join(dir, "server-key.pem"))
	}
	if option == "hide" {
		script := `mount -t tmpfs -o size=1m,mode=0755 tmpfs "$1" && shift && exec "$@"`
		argv = append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", ts.Getenv("WORK")}, argv...)
	}
	log, err := os.Create(filepath.Join(dir, "dockerd.log"))
	ts.Check(err)
	daemon := exec.Command(argv[0], argv[1:]...)
	daemon.Stdout, daemon.Stderr = log, log
	ts.Check(daemon.Start())
	engine := engineAt(host)
	if option == "tls" {
		engine.certs = certs
		ts.Setenv(args[0]+"_CERTS", certs)
	}
	done := make(chan struct{})
	go func() { daemon.Wait(); close(done) }()
	stop := func() {
		daemon.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			daemon.Process.Kill()
			<-done
		}
	}
	daemons.Store(ts.Getenv("WORK")+"\x00"+args[0], stop)
	ts.Defer(func() {
		if out, err := engine.docker("ps", "-aq").Output(); err == nil && len(out) > 0 {
			engine.docker(append([]string{"rm", "-f"}, strings.Fields(string(out))...)...).Run()
		}
		stop()
		exec.Command("sh", "-c", `awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r | xargs -r umount -l`, "sh", dir).Run()
		os.RemoveAll(dir)
	})
	waitListening(ts, "127.0.0.1:"+port, log.Name())
	ts.Check(engine.waitAnswering("dockerd", log.Name()))
	save := engineAt(ts.Getenv("DOCKER_HOST")).docker("save", testImage)
	load := engine.docker("load", "-q")
	pipe, err := save.StdoutPipe()
	ts.Check(err)
	load.Stdin = pipe
	ts.Check(save.Start())
	if out, err := load.CombinedOutput(); err != nil {
		ts.Fatalf("docker load: %v\n%s", err, out)
	}
	ts.Check(save.Wait())
	ts.Setenv(args[0], host)
}
