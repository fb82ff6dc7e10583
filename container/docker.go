// Package container is the container engine behind full isolation: the
// Runtime interface and its Docker Engine adapter. It is the only package
// that imports the Docker client; it knows nothing of environments,
// policies or git, only of containers to make, inspect, exec in and
// remove.
package container

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/moby/moby/client/pkg/jsonmessage"
	"golang.org/x/term"
)

// Runtime is the container engine behind full mode. It is the only place
// that talks to Docker; everything else uses this interface.
type Runtime interface {
	// Version is the engine's name and version ("Podman Engine 4.3.1");
	// an error when it does not answer.
	Version(ctx context.Context) (string, error)
	// EnsureImage pulls image unless it is there, reporting progress, with
	// the credentials the Docker CLI's config holds for its registry.
	EnsureImage(ctx context.Context, image string, progress io.Writer) error
	// Create makes (and does not start) a container.
	Create(ctx context.Context, spec ContainerSpec) (string, error)
	Start(ctx context.Context, id string) error
	// Stop ends every process of a container at once (SIGKILL) and
	// returns once they are gone; it keeps the container, which Start
	// runs again. A missing or stopped one is fine.
	Stop(ctx context.Context, id string) error
	// Inspect finds a container; its State is "running", "exited", ...
	// or "missing" when there is no such container.
	Inspect(ctx context.Context, id string) (ContainerInfo, error)
	// List returns the containers carrying all the given labels.
	List(ctx context.Context, labels map[string]string) ([]ContainerInfo, error)
	// Remove deletes a container, running or not; a missing one is fine.
	Remove(ctx context.Context, id string) error
	// Exec runs a command in a running container and returns its exit code;
	// a *StartError when the command could not start there.
	Exec(ctx context.Context, id string, spec ExecSpec) (int, error)
	// CopyTo unpacks a tar stream into a container (made, running or
	// not) at dir, with the owners its entries name.
	CopyTo(ctx context.Context, id, dir string, content io.Reader) error
	Close() error
}

// ContainerSpec describes a container to create.
type ContainerSpec struct {
	Name    string
	Image   string
	Labels  map[string]string
	Binds   []Bind   // host paths, mounted at the same or another path
	Hidden  []string // paths covered by an empty read-only tmpfs
	WorkDir string
	User    string // uid:gid, or a name the image knows
	Env     []string
	CPUs    float64
	Memory  int64
	Pids    int64
	Network string
	// Caps are the only capabilities the container keeps; no process in
	// it gains privileges (no-new-privileges).
	Caps []string
	Cmd  []string // the long-lived process, run under an init that reaps children
	// Ports are published on the host's loopback at the same numbers.
	Ports []int
}

// Bind mounts a host path into the container.
type Bind struct {
	Source, Target string
	ReadOnly       bool
}

// ContainerInfo is a container found by List.
type ContainerInfo struct {
	ID     string
	Name   string
	State  string
	Labels map[string]string
}

// ExecSpec is a command to run in a container.
type ExecSpec struct {
	Cmd     []string
	WorkDir string
	User    string
	Env     []string
	// TTY gives the command a terminal; when Stdin is a terminal (an
	// *os.File), that terminal is raw while Exec relays it (and only
	// then), and the command has its size and follows its changes.
	TTY            bool
	Stdin          io.Reader // nil: no input
	Stdout, Stderr io.Writer
}

// dockerRuntime is Runtime over the Docker Engine API.
type dockerRuntime struct {
	cli *client.Client
	// local: the engine runs on this machine, so the process ids it
	// reports are this machine's.
	local bool
}

func (d *dockerRuntime) Close() error { return d.cli.Close() }

func (d *dockerRuntime) Version(ctx context.Context) (string, error) {
	v, err := d.cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "", err
	}
	return engineName(v) + " " + v.Version, nil
}

// engineName is the engine's product name: podman's names its own
// component ("Podman Engine"); Docker's says its platform ("Docker
// Engine - Community"), or nothing (a distribution's build).
func engineName(v client.ServerVersionResult) string {
	for _, c := range v.Components {
		if strings.HasSuffix(c.Name, " Engine") {
			return c.Name
		}
	}
	if strings.Contains(v.Platform.Name, "Docker") {
		return v.Platform.Name
	}
	return "Docker Engine"
}

func (d *dockerRuntime) EnsureImage(ctx context.Context, image string, progress io.Writer) error {
	if _, err := d.cli.ImageInspect(ctx, image); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		return err
	}
	auth, err := registryAuth(ctx, image)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "pulling image %s\n", image)
	resp, err := d.cli.ImagePull(ctx, image, client.ImagePullOptions{RegistryAuth: auth})
	if err != nil {
		return err
	}
	defer resp.Close()
	// The Docker CLI's own rendering: on a terminal, a line per layer kept
	// up to date; elsewhere, each layer's changes of state.
	return jsonmessage.DisplayStream(resp, progress)
}

func (d *dockerRuntime) Create(ctx context.Context, s ContainerSpec) (string, error) {
	init := true
	host := &container.HostConfig{
		Init:        &init,
		NetworkMode: container.NetworkMode(s.Network),
		CapDrop:     []string{"ALL"},
		CapAdd:      s.Caps,
		SecurityOpt: []string{"no-new-privileges"},
		Resources: container.Resources{
			NanoCPUs:  int64(s.CPUs * 1e9),
			Memory:    s.Memory,
			PidsLimit: &s.Pids,
		},
	}
	for _, b := range s.Binds {
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: b.Source, Target: b.Target, ReadOnly: b.ReadOnly})
	}
	for _, p := range s.Hidden {
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeTmpfs, Target: p, ReadOnly: true})
	}
	config := &container.Config{
		Image: s.Image, Labels: s.Labels, WorkingDir: s.WorkDir, User: s.User, Env: s.Env, Cmd: s.Cmd,
	}
	if len(s.Ports) > 0 {
		config.ExposedPorts, host.PortBindings = network.PortSet{}, network.PortMap{}
		for _, p := range s.Ports {
			port := network.MustParsePort(fmt.Sprintf("%d/tcp", p))
			config.ExposedPorts[port] = struct{}{}
			host.PortBindings[port] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(p)}}
		}
	}
	res, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: s.Name, Config: config, HostConfig: host})
	return res.ID, err
}

func (d *dockerRuntime) Start(ctx context.Context, id string) error {
	_, err := d.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return err
}

func (d *dockerRuntime) Stop(ctx context.Context, id string) error {
	now := 0
	_, err := d.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Signal: "SIGKILL", Timeout: &now})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}

func (d *dockerRuntime) Inspect(ctx context.Context, id string) (ContainerInfo, error) {
	res, err := d.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return ContainerInfo{ID: id, State: "missing"}, nil
	}
	if err != nil {
		return ContainerInfo{}, err
	}
	info := ContainerInfo{ID: res.Container.ID, Name: strings.TrimPrefix(res.Container.Name, "/"), State: "unknown"}
	if res.Container.Config != nil {
		info.Labels = res.Container.Config.Labels
	}
	if res.Container.State != nil {
		info.State = string(res.Container.State.Status)
	}
	return info, nil
}

func (d *dockerRuntime) List(ctx context.Context, labels map[string]string) ([]ContainerInfo, error) {
	f := client.Filters{}
	for k, v := range labels {
		f.Add("label", k+"="+v)
	}
	res, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	var out []ContainerInfo
	for _, c := range res.Items {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, ContainerInfo{ID: c.ID, Name: name, State: string(c.State), Labels: c.Labels})
	}
	return out, nil
}

func (d *dockerRuntime) Remove(ctx context.Context, id string) error {
	_, err := d.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}

func (d *dockerRuntime) CopyTo(ctx context.Context, id, dir string, content io.Reader) error {
	_, err := d.cli.CopyToContainer(ctx, id, client.CopyToContainerOptions{DestinationPath: dir, Content: content})
	return err
}

func (d *dockerRuntime) Exec(ctx context.Context, id string, s ExecSpec) (int, error) {
	terminal, size := terminalOf(s)
	if terminal != nil {
		// Keys reach the command as typed while the terminal is relayed
		// (from before the command starts), and only then: it is restored
		// before Exec returns.
		old, err := term.MakeRaw(int(terminal.Fd()))
		if err != nil {
			return -1, err
		}
		defer term.Restore(int(terminal.Fd()), old)
	}
	created, err := d.cli.ExecCreate(ctx, id, client.ExecCreateOptions{
		Cmd: s.Cmd, WorkingDir: s.WorkDir, User: s.User, Env: s.Env, TTY: s.TTY,
		AttachStdin: s.Stdin != nil, AttachStdout: true, AttachStderr: true, ConsoleSize: size,
	})
	if err != nil {
		return -1, err
	}
	att, err := d.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{TTY: s.TTY, ConsoleSize: size})
	if err != nil {
		return -1, err
	}
	defer att.Close()
	if terminal != nil {
		defer d.followSize(ctx, created.ID, terminal)()
	}
	stdout, stderr := &startFailure{w: s.Stdout}, &startFailure{w: s.Stderr}
	if s.Stdin != nil {
		go func() {
			io.Copy(att.Conn, s.Stdin)
			att.CloseWrite()
		}()
	}
	done := make(chan error, 1)
	go func() {
		var err error
		if s.TTY {
			_, err = io.Copy(stdout, att.Reader)
		} else {
			_, err = stdcopy.StdCopy(stdout, stderr, att.Reader)
		}
		done <- err
	}()
	select {
	case err = <-done:
		if err != nil { // its output could not be taken (past a Limit): stop it too
			d.signal(context.WithoutCancel(ctx), created.ID, s.TTY, att)
		}
	case <-ctx.Done():
		// Interrupted: stop the command inside, then stop reading.
		d.signal(context.WithoutCancel(ctx), created.ID, s.TTY, att)
		err = <-done
	}
	if err != nil && ctx.Err() == nil {
		return -1, err
	}
	info, ierr := d.cli.ExecInspect(context.WithoutCancel(ctx), created.ID, client.ExecInspectOptions{})
	if ierr != nil {
		return -1, ierr
	}
	if ctx.Err() != nil {
		return info.ExitCode, ctx.Err()
	}
	if err := stdout.cause(info.ExitCode); err != nil {
		return -1, err
	}
	if err := stderr.cause(info.ExitCode); err != nil {
		return -1, err
	}
	return info.ExitCode, nil
}

// StartError is Exec's error when the command could not start in the
// container: Err wraps fs.ErrNotExist when there is no such command,
// fs.ErrPermission when it cannot be run.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *StartError) Unwrap() error { return e.Err }

// startFailure passes a command's output on, but holds back a first
// write that is the engine's report that the command could not start
// (Docker's `OCI runtime exec failed: ... executable file not found in
// $PATH` on its stdout, exit status 126; podman's `... OCI runtime
// attempted to invoke a command that was not found`, 127, or `OCI
// permission denied`, 126), which cause turns into an error.
type startFailure struct {
	w       io.Writer
	started bool
	held    []byte
}

func (f *startFailure) Write(p []byte) (int, error) {
	// podman follows its report with errors of its own about the
	// attach ("Error: read unixpacket ...: connection reset by peer").
	if !f.started && (f.held == nil && engineReport(string(p)) || f.held != nil && strings.HasPrefix(string(p), "Error: ")) {
		f.held = append(f.held, p...)
		return len(p), nil
	}
	f.started = true
	if f.held != nil {
		held := f.held
		f.held = nil
		if _, err := f.w.Write(held); err != nil {
			return 0, err
		}
	}
	return f.w.Write(p)
}

// cause is, when the command never started, a StartError saying why;
// nil when it ran, and then
// what was held back is passed on.
func (f *startFailure) cause(code int) error {
	if f.held == nil {
		return nil
	}
	msg := strings.TrimSpace(string(f.held))
	lower := strings.ToLower(msg)
	switch {
	case code != 126 && code != 127:
	case strings.Contains(lower, "not found") || strings.Contains(lower, "no such file"):
		return &StartError{Err: fmt.Errorf("%w: %s", fs.ErrNotExist, msg)}
	case strings.Contains(lower, "permission denied"):
		return &StartError{Err: fmt.Errorf("%w: %s", fs.ErrPermission, msg)}
	}
	_, err := f.w.Write(f.held)
	return err
}

// engineReport tells whether an exec's first output is the engine's
// report that the command could not start.
func engineReport(p string) bool {
	return strings.HasPrefix(p, "OCI runtime exec failed") ||
		strings.Contains(p, "OCI runtime attempted to invoke") || strings.Contains(p, "OCI permission denied")
}

// terminalOf is the terminal an exec with a TTY relays (its input, when
// that is a terminal) and that terminal's size now (zero when it has
// none); nil when none.
func terminalOf(s ExecSpec) (*os.File, client.ConsoleSize) {
	f, ok := s.Stdin.(*os.File)
	if !s.TTY || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, client.ConsoleSize{}
	}
	size, _ := sizeOf(f)
	return f, size
}

// sizeOf is a terminal's size; false when it has none.
func sizeOf(terminal *os.File) (client.ConsoleSize, bool) {
	width, height, err := term.GetSize(int(terminal.Fd()))
	return client.ConsoleSize{Height: uint(height), Width: uint(width)}, err == nil && width > 0 && height > 0
}

// followSize resizes the exec's terminal to the terminal's now (engines
// before API 1.42 ignore the size given at the start) and whenever that
// changes (SIGWINCH), until the returned stop is called.
func (d *dockerRuntime) followSize(ctx context.Context, execID string, terminal *os.File) (stop func()) {
	changed := make(chan os.Signal, 1)
	signal.Notify(changed, syscall.SIGWINCH)
	select {
	case changed <- syscall.SIGWINCH: // the size now
	default: // a change is already waiting
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-changed:
				if size, ok := sizeOf(terminal); ok {
					d.cli.ExecResize(ctx, execID, client.ExecResizeOptions(size))
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(changed)
		close(done)
	}
}

// signal stops an interrupted exec: through the terminal with Ctrl-C, or
// by an interrupt to the exec'd process's group when the engine is on
// this machine (killed if it has not ended after stopGrace). An engine
// elsewhere reports its own machine's process ids,
// which must never be signalled here: the command is then left to end
// with its container.
func (d *dockerRuntime) signal(ctx context.Context, execID string, tty bool, att client.ExecAttachResult) {
	if tty {
		att.Conn.Write([]byte{3})
		return
	}
	if !d.local {
		att.Close()
		return
	}
	info, err := d.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
	if err != nil || info.PID <= 0 {
		att.Close()
		return
	}
	interrupt(info.PID, syscall.SIGINT)
	att.Close()
	// Wait, bounded, until it ended, so that its exit code is the real
	// one; what is left then is killed.
	for deadline := time.Now().Add(stopGrace); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if info, err := d.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{}); err != nil || !info.Running {
			return
		}
	}
	interrupt(info.PID, syscall.SIGKILL)
}

// stopGrace is how long an interrupted exec has to end before it is killed.
const stopGrace = 5 * time.Second

// interrupt sends sig to an exec'd process's group, as a terminal's
// Ctrl-C does: the engine makes it a session (and group) leader, so that
// a shell's children are reached too. Its process alone when it leads
// no group.
func interrupt(pid int, sig syscall.Signal) {
	if syscall.Kill(-pid, sig) != nil {
		syscall.Kill(pid, sig)
	}
}
