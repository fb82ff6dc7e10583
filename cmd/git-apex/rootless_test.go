package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// cmdRootless starts, for this script, a rootless podman service
// (startRootless) and sets RL_HOME (a home directory the user owns),
// RL_RUN (its XDG_RUNTIME_DIR), RL_HOST (the service's socket, as a
// DOCKER_HOST) and RL_BIN (a directory with git-apex the user can run).
// The service, its containers and the user's processes are gone when
// the script ends.
//
//	rootless
func cmdRootless(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: rootless")
	}
	r, err := startRootless()
	if r != nil {
		ts.Defer(r.stop)
	}
	ts.Check(err)
	ts.Setenv("RL_HOME", r.home)
	ts.Setenv("RL_RUN", r.run)
	ts.Setenv("RL_HOST", r.host)
	ts.Setenv("RL_BIN", r.bin)
}

// rootlessPodman is podman's service run rootless by rootlessUser, in a
// directory of its own.
type rootlessPodman struct {
	dir     string    // holds the rest; root's, readable by all
	home    string    // a home directory the user owns
	run     string    // the user's XDG_RUNTIME_DIR
	bin     string    // git-apex (this test binary), which the user can run
	host    string    // the service's socket, as a DOCKER_HOST
	uid     int       // the user's
	gid     int       // the user's
	service *exec.Cmd // the service, leading its process group
}

// startRootless starts podman's service as rootlessUser (rootless: its
// storage and socket the user's, runc as its runtime) and gives it the
// test image. Once it returns a rootlessPodman, even with an error, its
// stop must be called.
func startRootless() (*rootlessPodman, error) {
	u, err := user.Lookup(rootlessUser)
	if err != nil {
		return nil, err
	}
	r := &rootlessPodman{}
	r.uid, _ = strconv.Atoi(u.Uid)
	r.gid, _ = strconv.Atoi(u.Gid)
	if r.dir, err = os.MkdirTemp("", "apex-rootless-"); err != nil {
		return nil, err
	}
	r.home, r.run, r.bin = filepath.Join(r.dir, "home"), filepath.Join(r.dir, "run"), filepath.Join(r.dir, "bin")
	if err := r.prepare(); err != nil {
		return r, err
	}
	env := []string{"HOME=" + r.home, "XDG_RUNTIME_DIR=" + r.run, "CONTAINERS_CONF=" + filepath.Join(r.dir, "containers.conf"),
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	log, err := os.Create(filepath.Join(r.dir, "podman.log"))
	if err != nil {
		return r, err
	}
	defer log.Close()
	argv := append([]string{"runuser", "-u", rootlessUser, "--", "env", "-i"}, env...)
	argv = append(argv, "podman", "--root", filepath.Join(r.home, "storage"), "--runroot", filepath.Join(r.run, "storage"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file", "--runtime", "runc",
		"system", "service", "--time=0")
	r.service = exec.Command(argv[0], argv[1:]...)
	r.service.Stdout, r.service.Stderr = log, log
	r.service.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.service.Start(); err != nil {
		r.service = nil
		return r, err
	}
	r.host = "unix://" + filepath.Join(r.run, "podman", "podman.sock")
	if err := engineAt(r.host).waitAnswering("rootless podman", log.Name()); err != nil {
		return r, err
	}
	build := exec.Command(filepath.Join("..", "..", "testdata", "docker", "build-image.sh"), testImage)
	build.Env = append(os.Environ(), "DOCKER_HOST="+r.host)
	if out, err := build.CombinedOutput(); err != nil {
		return r, fmt.Errorf("building %s in rootless podman: %v\n%s", testImage, err, out)
	}
	return r, nil
}

// prepare makes the home, runtime and bin directories, puts git-apex in
// bin, and writes the service's containers.conf.
func (r *rootlessPodman) prepare() error {
	if err := os.Chmod(r.dir, 0o755); err != nil {
		return err
	}
	for _, d := range []string{r.home, r.run, r.bin} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	for _, d := range []string{r.home, r.run} {
		if err := os.Chown(d, r.uid, r.gid); err != nil {
			return err
		}
	}
	for _, d := range []string{r.home, r.bin} {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	program, err := os.ReadFile(self) // run as git-apex, the test binary is git-apex
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.bin, "git-apex"), program, 0o755); err != nil {
		return err
	}
	// podman's default limits are above the hard limits of this sandbox,
	// which gives no CAP_SYS_RESOURCE to raise them.
	var nofile, nproc unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		return err
	}
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &nproc); err != nil {
		return err
	}
	procs := min(nproc.Max, 16384)
	return os.WriteFile(filepath.Join(r.dir, "containers.conf"), []byte(fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\n",
		nofile.Max, nofile.Max, procs, procs)), 0o644)
}

// stop removes the service's containers, stops it and the user's
// processes, and removes the directory.
func (r *rootlessPodman) stop() {
	if r.service != nil {
		engine := engineAt(r.host)
		if out, err := engine.docker("ps", "-aq").Output(); err == nil && len(out) > 0 {
			engine.docker(append([]string{"rm", "-f"}, strings.Fields(string(out))...)...).Run()
		}
		syscall.Kill(-r.service.Process.Pid, syscall.SIGTERM)
		r.service.Wait()
	}
	// podman's pause process keeps the user's namespaces; nothing else
	// runs as this user.
	exec.Command("pkill", "-KILL", "-u", rootlessUser).Run()
	os.RemoveAll(r.dir)
}

// TestScriptsOnRootlessPodman runs the README's containment scenarios
// (the table of routes, those that use a container engine) against a
// rootless podman, as rootless podman is used: by the user who runs it.
// It starts the service as rootlessUser and runs TestScripts, in this
// test binary, as that user, with only those scenarios and the service's
// socket as DOCKER_HOST; its output is this test's.
func TestScriptsOnRootlessPodman(t *testing.T) {
	if !haveRootless() {
		t.Skip("cannot run a rootless podman here: it needs root to become the user " + rootlessUser +
			" (.ci/run makes it, with subordinate ids), podman, runuser and newuidmap")
	}
	scenarios := routeScenarios(t)
	engineDir, err := buildEngine()
	if err != nil {
		t.Fatal(err)
	}
	r, err := startRootless()
	if r != nil {
		t.Cleanup(r.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	// What the user's run reads, in the layout TestScripts expects
	// (scripts at ../../testdata/script), and a TMPDIR it owns for the
	// scripts' work directories.
	src, tmp, engine := filepath.Join(r.dir, "src"), filepath.Join(r.dir, "tmp"), filepath.Join(r.dir, "engine")
	for _, d := range []string{filepath.Join(src, "cmd", "git-apex"), filepath.Join(src, "testdata", "script"), tmp, engine} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range scenarios {
		copyFile(t, file, filepath.Join(src, "testdata", "script", filepath.Base(file)))
	}
	copyFile(t, filepath.Join(engineDir, engineName), filepath.Join(engine, engineName))
	if err := os.Chown(tmp, r.uid, r.gid); err != nil {
		t.Fatal(err)
	}
	argv := []string{"runuser", "-u", rootlessUser, "--", "env", "-i", "HOME=" + r.home, "XDG_RUNTIME_DIR=" + r.run,
		"TMPDIR=" + tmp, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "DOCKER_HOST=" + r.host,
		engineDirVar + "=" + engine,
		filepath.Join(r.bin, "git-apex.test"), "-test.run", "^TestScripts$", "-test.count", "1", "-test.v"}
	if deadline, ok := t.Deadline(); ok {
		argv = append(argv, "-test.timeout", time.Until(deadline).Truncate(time.Second).String())
	}
	if err := os.Link(filepath.Join(r.bin, "git-apex"), filepath.Join(r.bin, "git-apex.test")); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(argv[0], argv[1:]...)
	run.Dir = filepath.Join(src, "cmd", "git-apex")
	run.Stdout, run.Stderr = os.Stdout, os.Stderr
	t.Logf("running %d scenarios as %s against %s", len(scenarios), rootlessUser, r.host)
	if err := run.Run(); err != nil {
		t.Fatalf("the scenarios on rootless podman, run as %s: %v (their output is above)", rootlessUser, err)
	}
}

// routeScenarios are the scenario files that the README's table of
// containment routes names and that use a container engine.
func routeScenarios(t *testing.T) []string {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n### Containment: what a full environment's container can and cannot do\n")
	_, table, _ := strings.Cut(section, "\n| route |")
	table, _, _ = strings.Cut(table, "\n\n")
	var files []string
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 2 {
			continue
		}
		for _, m := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(cells[len(cells)-2], -1) {
			file := filepath.Join("..", "..", "testdata", "script", m[1]+".txtar")
			if usesEngine(file) {
				files = append(files, file)
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("the README's table of containment routes names no scenario that uses a container engine")
	}
	return files
}

// copyFile copies the file from to to, readable by all.
func copyFile(t *testing.T, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, info.Mode().Perm()|0o444); err != nil {
		t.Fatal(err)
	}
}
