package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// rootlessUser is the user rootless_podman.txtar runs podman and git-apex
// as; .ci/run makes it, with subordinate ids of its own.
const rootlessUser = "apex-rootless"

// haveRootless says whether a rootless podman can be run here as
// rootlessUser: root (to become the user), podman and runuser, and the
// user with subordinate uids and gids.
func haveRootless() bool {
	if os.Getuid() != 0 {
		return false
	}
	for _, program := range []string{"podman", "runuser", "newuidmap"} {
		if _, err := exec.LookPath(program); err != nil {
			return false
		}
	}
	if _, err := user.Lookup(rootlessUser); err != nil {
		return false
	}
	for _, file := range []string{"/etc/subuid", "/etc/subgid"} {
		data, err := os.ReadFile(file)
		if err != nil || !strings.Contains("\n"+string(data), "\n"+rootlessUser+":") {
			return false
		}
	}
	return true
}

// cmdRootless starts, for this script, podman's service as rootlessUser
// (rootless: its storage and socket the user's, runc as its runtime),
// gives it the test image, and sets RL_HOME (a home directory the user
// owns), RL_RUN (its XDG_RUNTIME_DIR), RL_HOST (the service's socket, as
// a DOCKER_HOST) and RL_BIN (a directory with git-apex the user can run).
// The service, its containers and the user's processes are gone when
// the script ends.
//
//	rootless
func cmdRootless(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: rootless")
	}
	u, err := user.Lookup(rootlessUser)
	ts.Check(err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "apex-rootless-")
	ts.Check(err)
	ts.Check(os.Chmod(dir, 0o755))
	home, run, bin := filepath.Join(dir, "home"), filepath.Join(dir, "run"), filepath.Join(dir, "bin")
	for _, d := range []string{home, run, bin} {
		ts.Check(os.Mkdir(d, 0o700))
	}
	for _, d := range []string{home, run} {
		ts.Check(os.Chown(d, uid, gid))
	}
	ts.Check(os.Chmod(home, 0o755))
	ts.Check(os.Chmod(bin, 0o755))
	self, err := os.Executable()
	ts.Check(err)
	program, err := os.ReadFile(self) // run as git-apex, the test binary is git-apex
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(bin, "git-apex"), program, 0o755))
	// podman's default limits are above the hard limits of this sandbox,
	// which gives no CAP_SYS_RESOURCE to raise them.
	var nofile, nproc unix.Rlimit
	ts.Check(unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile))
	ts.Check(unix.Getrlimit(unix.RLIMIT_NPROC, &nproc))
	procs := min(nproc.Max, 16384)
	conf := filepath.Join(dir, "containers.conf")
	ts.Check(os.WriteFile(conf, []byte(fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\n",
		nofile.Max, nofile.Max, procs, procs)), 0o644))

	env := []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + run, "CONTAINERS_CONF=" + conf, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	log, err := os.Create(filepath.Join(dir, "podman.log"))
	ts.Check(err)
	argv := append([]string{"runuser", "-u", rootlessUser, "--", "env", "-i"}, env...)
	argv = append(argv, "podman", "--root", filepath.Join(home, "storage"), "--runroot", filepath.Join(run, "storage"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file", "--runtime", "runc",
		"system", "service", "--time=0")
	service := exec.Command(argv[0], argv[1:]...)
	service.Stdout, service.Stderr = log, log
	service.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ts.Check(service.Start())
	host := "unix://" + filepath.Join(run, "podman", "podman.sock")
	engine := engineAt(host)
	ts.Defer(func() {
		if out, err := engine.docker("ps", "-aq").Output(); err == nil && len(out) > 0 {
			engine.docker(append([]string{"rm", "-f"}, strings.Fields(string(out))...)...).Run()
		}
		syscall.Kill(-service.Process.Pid, syscall.SIGTERM)
		service.Wait()
		// podman's pause process keeps the user's namespaces; nothing
		// else runs as this user.
		exec.Command("pkill", "-KILL", "-u", rootlessUser).Run()
		os.RemoveAll(dir)
	})
	engine.waitAnswering(ts, "rootless podman", log.Name())
	build := exec.Command(filepath.Join("..", "..", "testdata", "docker", "build-image.sh"), testImage)
	build.Env = append(os.Environ(), "DOCKER_HOST="+host)
	if out, err := build.CombinedOutput(); err != nil {
		ts.Fatalf("building %s in rootless podman: %v\n%s", testImage, err, out)
	}
	ts.Setenv("RL_HOME", home)
	ts.Setenv("RL_RUN", run)
	ts.Setenv("RL_HOST", host)
	ts.Setenv("RL_BIN", bin)
}
