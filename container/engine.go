package container

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"

	"github.com/git-apex/git-apex/hostexec"
)

// Endpoint is where an engine listens and how to reach it.
type Endpoint struct {
	// Host is the engine's address: unix://, tcp:// or
	// ssh://[user@]host[:port][/socket]; "" for Docker's default socket.
	Host string
	// TLS is the context's TLS material (its CA, client certificate and
	// key), for a tcp:// host; nil when it has none.
	TLS *tls.Config
	// TLSDir is the directory TLS was read from (the context's, or
	// DOCKER_CERT_PATH), and SkipVerify whether the engine's certificate
	// is taken unchecked; both are recorded to reach the engine again.
	TLSDir     string
	SkipVerify bool
	// Name is the Docker context it was read from; "" when none was.
	Name string
}

// record is an Endpoint as a full env's record keeps it (Record).
type record struct {
	Host       string `json:"host"`
	Context    string `json:"context,omitempty"`
	TLSDir     string `json:"tls_dir,omitempty"`
	SkipVerify bool   `json:"skip_verify,omitempty"`
}

// Record is what reaches the engine again whatever DOCKER_HOST and
// DOCKER_CONTEXT say later (Recorded): its address (Docker's default
// socket by its path), the context it was read from, and where its TLS
// material is.
func (ep Endpoint) Record() string {
	data, _ := json.Marshal(record{Host: ep.Address(), Context: ep.Name, TLSDir: ep.TLSDir, SkipVerify: ep.SkipVerify})
	return string(data)
}

// Recorded is the endpoint a Record describes, its TLS material read
// again from where it was.
func Recorded(rec string) (Endpoint, error) {
	var r record
	if err := json.Unmarshal([]byte(rec), &r); err != nil || r.Host == "" {
		return Endpoint{}, fmt.Errorf("unreadable engine record %q", rec)
	}
	ep := Endpoint{Host: r.Host, Name: r.Context, TLSDir: r.TLSDir, SkipVerify: r.SkipVerify}
	if r.TLSDir != "" || r.SkipVerify {
		tlsConfig, err := contextTLS(r.TLSDir, r.SkipVerify)
		if err != nil {
			return Endpoint{}, fmt.Errorf("engine %s: %w", ep, err)
		}
		ep.TLS = tlsConfig
	}
	return ep, nil
}

// Address is the engine's address, Docker's default socket spelled out.
func (ep Endpoint) Address() string {
	if ep.Host == "" {
		return "unix://" + dockerSocket
	}
	return ep.Host
}

// String names the engine in messages and in list: its address, after
// the name of the context it was read from.
func (ep Endpoint) String() string {
	if ep.Name != "" {
		return fmt.Sprintf("%s (context %s)", ep.Address(), ep.Name)
	}
	return ep.Address()
}

// CLI is the Docker command line that reaches the engine: `docker
// --context NAME` for a context's, else `docker --host ADDRESS`.
func (ep Endpoint) CLI() string {
	if ep.Name != "" {
		return "docker --context " + ep.Name
	}
	return "docker --host " + ep.Address()
}

// EngineName names the engine a record describes (Endpoint.String), or
// returns the record itself when it cannot be read ("" for "").
func EngineName(rec string) string {
	var r record
	if json.Unmarshal([]byte(rec), &r) != nil || r.Host == "" {
		return rec
	}
	return Endpoint{Host: r.Host, Name: r.Context}.String()
}

// FindEndpoint finds the engine the way the Docker CLI does: DOCKER_HOST
// (with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH), else the context
// DOCKER_CONTEXT or the CLI's config.json names, else Docker's default
// socket when it is there, else podman's service (podmanSockets). A
// context that is named but cannot be read is an error, not a fallback.
func FindEndpoint() (Endpoint, error) {
	if host := os.Getenv("DOCKER_HOST"); host != "" {
		ep := Endpoint{Host: host, TLSDir: os.Getenv("DOCKER_CERT_PATH"), SkipVerify: os.Getenv("DOCKER_TLS_VERIFY") == ""}
		if ep.TLSDir == "" {
			return Endpoint{Host: host}, nil
		}
		tlsConfig, err := contextTLS(ep.TLSDir, ep.SkipVerify)
		if err != nil {
			return Endpoint{}, fmt.Errorf("DOCKER_CERT_PATH %q: %w", ep.TLSDir, err)
		}
		ep.TLS = tlsConfig
		return ep, nil
	}
	name := os.Getenv("DOCKER_CONTEXT")
	if name == "" {
		cfg, err := readCLIConfig()
		if err != nil {
			return Endpoint{}, err
		}
		name = cfg.CurrentContext
	}
	if name != "" && name != "default" {
		return ContextEndpoint(name)
	}
	return Endpoint{Host: podmanHost()}, nil
}

// configDir is the Docker CLI's configuration directory: DOCKER_CONFIG,
// else ~/.docker.
func configDir() string {
	if dir := os.Getenv("DOCKER_CONFIG"); dir != "" {
		return dir
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".docker")
}

// cliConfig is what git-apex reads of the Docker CLI's config.json.
type cliConfig struct {
	CurrentContext string
	Auths          map[string]registry.AuthConfig
	CredsStore     string
	CredHelpers    map[string]string
}

// readCLIConfig reads the Docker CLI's config.json; an empty one when
// there is none.
func readCLIConfig() (cliConfig, error) {
	var cfg cliConfig
	path := filepath.Join(configDir(), "config.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("%s: %v", path, err)
	}
	return cfg, nil
}

// ContextEndpoint reads a Docker context from the CLI's configuration
// directory: its engine address (contexts/meta/<sha256 of name>/meta.json)
// and TLS material (contexts/tls/<sha256 of name>/docker/{ca,cert,key}.pem).
// "default" is Docker's default engine.
func ContextEndpoint(name string) (Endpoint, error) {
	if name == "default" {
		return Endpoint{Host: podmanHost(), Name: name}, nil
	}
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	var meta struct {
		Endpoints map[string]struct {
			Host          string
			SkipTLSVerify bool
		}
	}
	path := filepath.Join(configDir(), "contexts", "meta", id, "meta.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Endpoint{}, fmt.Errorf("no Docker context %q (see `docker context ls`)", name)
	}
	if err != nil {
		return Endpoint{}, err
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return Endpoint{}, fmt.Errorf("Docker context %q: %s: %v", name, path, err)
	}
	docker := meta.Endpoints["docker"]
	ep := Endpoint{Host: docker.Host, Name: name, SkipVerify: docker.SkipTLSVerify}
	if dir := filepath.Join(configDir(), "contexts", "tls", id, "docker"); isDir(dir) {
		ep.TLSDir = dir
	}
	ep.TLS, err = contextTLS(ep.TLSDir, docker.SkipTLSVerify)
	if err != nil {
		return Endpoint{}, fmt.Errorf("Docker context %q: %w", name, err)
	}
	return ep, nil
}

// contextTLS is the TLS configuration of a context's TLS directory: its
// ca.pem the only authority trusted, its cert.pem and key.pem the
// client's certificate; nil when the directory is not there.
func contextTLS(dir string, skipVerify bool) (*tls.Config, error) {
	if _, err := os.Stat(dir); dir == "" || errors.Is(err, fs.ErrNotExist) {
		if skipVerify {
			return &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}, nil
		}
		return nil, nil
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: skipVerify}
	if ca, err := os.ReadFile(filepath.Join(dir, "ca.pem")); err == nil {
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("%s: no certificate in it", filepath.Join(dir, "ca.pem"))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if _, err := os.Stat(cert); err == nil {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}

// Rootless reports whether the engine runs as a user other than root (a
// rootless Docker or podman): its unix socket is that user's. Such an
// engine's containers' root is that user, and their other users are the
// user's subordinate ids.
func (ep Endpoint) Rootless() bool {
	path, ok := strings.CutPrefix(ep.Host, "unix://")
	if !ok {
		return false
	}
	info, err := os.Stat(path)
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Uid != 0
}

// Local reports whether the engine runs on this machine, and so sees its
// files: a unix socket, or a tcp:// or ssh:// host on the loopback.
func (ep Endpoint) Local() bool {
	if ep.Host == "" || strings.HasPrefix(ep.Host, "unix://") || strings.HasPrefix(ep.Host, "npipe://") {
		return true
	}
	u, err := url.Parse(ep.Host)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Reach connects to the engine at ep and checks that it answers within
// wait; it returns the engine's name and version.
func Reach(ctx context.Context, ep Endpoint, wait time.Duration) (Runtime, string, error) {
	rt, err := Connect(ep)
	if err != nil {
		return nil, "", err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	version, err := rt.Version(wctx)
	if err != nil {
		rt.Close()
		if wctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("it did not answer within [container].connect_timeout (%s): %w", wait, err)
		}
		return nil, "", err
	}
	return rt, version, nil
}

// Connect makes a client of the engine at ep, negotiating the API
// version. It does not contact the engine.
func Connect(ep Endpoint) (Runtime, error) {
	var opts []client.Opt
	if ep.TLS != nil {
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: &http.Transport{
			TLSClientConfig: ep.TLS, MaxIdleConns: 6, IdleConnTimeout: 30 * time.Second,
		}}))
	}
	opts = append(opts, client.WithAPIVersionFromEnv(), client.WithAPIVersionNegotiation())
	switch {
	case strings.HasPrefix(ep.Host, "ssh://"):
		dial, err := sshDialer(ep.Host)
		if err != nil {
			return nil, err
		}
		// The address is never dialled: every connection is a new ssh.
		opts = append(opts, client.WithHost("http://engine.over.ssh"), client.WithDialContext(dial))
	case ep.Host != "":
		opts = append(opts, client.WithHost(ep.Host))
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, err
	}
	return &dockerRuntime{cli: cli, local: ep.Local()}, nil
}

// sshDialer connects to the engine of an ssh:// host as the Docker CLI
// does: each connection is `ssh ... docker system dial-stdio` on that
// host, which relays it to the engine there (the one /socket names, else
// the remote docker's own). ssh runs in batch mode: it must log in
// without asking (a key or an agent), so that it never stops to read the
// terminal.
func sshDialer(host string) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("DOCKER_HOST %q: %v", host, err)
	}
	if u.Hostname() == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("DOCKER_HOST %q: want ssh://[user@]host[:port][/socket]", host)
	}
	argv := []string{"ssh", "-o", "ConnectTimeout=30", "-o", "BatchMode=yes", "-T"}
	if u.User != nil {
		argv = append(argv, "-l", u.User.Username())
	}
	if u.Port() != "" {
		argv = append(argv, "-p", u.Port())
	}
	argv = append(argv, "--", u.Hostname(), "docker")
	if u.Path != "" && u.Path != "/" {
		argv = append(argv, "--host=unix://"+u.Path)
	}
	argv = append(argv, "system", "dial-stdio")
	return func(context.Context, string, string) (net.Conn, error) {
		return hostexec.Pipe(argv, nil)
	}, nil
}

// dockerSocket is where Docker's engine listens by default.
const dockerSocket = "/var/run/docker.sock"

// podmanSockets are where podman's Docker-compatible service listens by
// default, as the podman CLI looks for its own: for root the system's
// service (rootful), for any other user theirs (rootless, under
// XDG_RUNTIME_DIR, else /run/user/<uid>); then the other one.
func podmanSockets() []string {
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = fmt.Sprintf("/run/user/%d", os.Getuid())
	}
	rootless, rootful := filepath.Join(dir, "podman", "podman.sock"), "/run/podman/podman.sock"
	if os.Getuid() == 0 {
		return []string{rootful, rootless}
	}
	return []string{rootless, rootful}
}

// podmanHost is the address of a podman socket when Docker's default
// socket is not there, or "".
func podmanHost() string {
	if isSocket(dockerSocket) {
		return ""
	}
	for _, sock := range podmanSockets() {
		if isSocket(sock) {
			return "unix://" + sock
		}
	}
	return ""
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func isSocket(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode()&os.ModeSocket != 0
}
