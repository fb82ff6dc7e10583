// Package api is git-apex's HTTP/JSON server, `git apex serve`: the
// operations of the service layer for orchestrators, under the paths
// they were built against (/api/developer/workflows and worktrees), with
// the lifecycle events as Server-Sent Events and an OpenAPI document of
// it all. It listens on a unix socket (mode 0600) or on a loopback TCP
// address with a bearer token; a request runs under the same repository
// lock and state database as the command line, so both can work on one
// repository at once.
package api

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/repo"
)

// Options configure a server.
type Options struct {
	// Repos are the working trees of the repositories served; the first
	// is the one a request that names none works on.
	Repos []string
	// Socket is the unix socket to listen on when Listen is "";
	// "": DefaultSocket().
	Socket string
	// Listen is a TCP address (host:port) to listen on instead of a
	// socket. It must be a loopback address unless TLSCert and TLSKey are
	// set.
	Listen          string
	TLSCert, TLSKey string
	// TokenFile holds the bearer token that TCP requests must send;
	// "": DefaultTokenFile(). It is made on first use.
	TokenFile string
	// AllowClone lets a request name a repository by URL; it is cloned
	// once, under the first repository's git directory.
	AllowClone bool
	// MaxRunning caps the workflows' commands running at once; the rest
	// wait. 0: the number of CPUs.
	MaxRunning int
	// Grace is how long a command stopped at shutdown has between SIGTERM
	// and SIGKILL; 0: 2 s.
	Grace time.Duration
	// Repo configures every repository opened for a request.
	Repo repo.Options
	// Log receives one line per failed request and the server's own
	// notes; nil discards them.
	Log io.Writer
}

// The limits every request lives within.
const (
	maxBody           = 1 << 20 // bytes of a request body
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second // the whole request, body included
	idleTimeout       = 2 * time.Minute
	shutdownWait      = 10 * time.Second // for requests in flight at shutdown
)

// stateDir is git-apex's own directory of user state:
// $XDG_STATE_HOME/git-apex, else ~/.local/state/git-apex.
func stateDir() (string, error) {
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "git-apex"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find a state directory: set XDG_STATE_HOME: %w", err)
	}
	return filepath.Join(home, ".local", "state", "git-apex"), nil
}

// DefaultSocket is where the server listens unless told otherwise:
// $XDG_RUNTIME_DIR/git-apex/api.sock, else api.sock in the state
// directory.
func DefaultSocket() (string, error) {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "git-apex", "api.sock"), nil
	}
	dir, err := stateDir()
	return filepath.Join(dir, "api.sock"), err
}

// DefaultTokenFile is where the bearer token is kept:
// $XDG_STATE_HOME/git-apex/token.
func DefaultTokenFile() (string, error) {
	dir, err := stateDir()
	return filepath.Join(dir, "token"), err
}

// Token returns the bearer token kept in file (DefaultTokenFile() when
// ""), making one (32 random bytes, in hex, mode 0600) when there is
// none. A token file that others may read is refused.
func Token(file string) (string, error) {
	if file == "" {
		var err error
		if file, err = DefaultTokenFile(); err != nil {
			return "", err
		}
	}
	if data, err := os.ReadFile(file); err == nil {
		info, err := os.Stat(file)
		if err != nil {
			return "", err
		}
		if info.Mode().Perm()&0o077 != 0 {
			return "", exitcode.New(exitcode.Refused, "the token file %s may be read by others (mode %v): `chmod 600 %s`, or remove it for a new token", file, info.Mode().Perm(), file)
		}
		token := strings.TrimSpace(string(data))
		if len(token) < 32 {
			return "", exitcode.New(exitcode.Refused, "the token file %s holds no token of at least 32 characters: remove it for a new one", file)
		}
		return token, nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	token := hex.EncodeToString(buf)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return Token(file) // another process made it first
	}
	if err != nil {
		return "", err
	}
	if _, err := fmt.Fprintln(f, token); err != nil {
		f.Close()
		return "", err
	}
	return token, f.Close()
}

// Serve serves until ctx ends, then shuts down: it stops accepting, lets
// the requests in flight finish (for up to 10 s), stops the workflows'
// running commands (SIGTERM, then SIGKILL after the grace period), marks
// them failed, and removes its socket.
func Serve(ctx context.Context, opts Options) error {
	if err := opts.check(); err != nil {
		return err
	}
	s, err := newServer(ctx, opts)
	if err != nil {
		return err
	}
	ln, addr, err := s.listen()
	if err != nil {
		return err
	}
	if s.socket != "" {
		defer os.Remove(s.socket)
	}
	for _, root := range s.roots {
		s.runs.failOrphans(ctx, root)
	}
	srv := &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		// No WriteTimeout: an event stream lasts as long as its client,
		// and a start in full mode may wait for an image.
	}
	s.notef("serving %s on %s", strings.Join(s.roots, ", "), addr)
	done := make(chan error, 1)
	go func() {
		if s.opts.TLSCert != "" {
			done <- srv.ServeTLS(ln, s.opts.TLSCert, s.opts.TLSKey)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		s.stop()
		return err
	case <-ctx.Done():
	}
	s.notef("shutting down")
	s.endStreams()
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	err = srv.Shutdown(wait)
	s.stop()
	if errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
		return fmt.Errorf("requests still running after %v were cut off", shutdownWait)
	}
	return err
}

// listen opens the server's socket or TCP address.
func (s *server) listen() (net.Listener, string, error) {
	if s.opts.Listen != "" {
		host, _, err := net.SplitHostPort(s.opts.Listen)
		if err != nil {
			return nil, "", exitcode.New(exitcode.Usage, "invalid --listen address %q: write HOST:PORT, like 127.0.0.1:7777", s.opts.Listen)
		}
		ip := net.ParseIP(host)
		loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
		if !loopback && s.opts.TLSCert == "" {
			return nil, "", exitcode.New(exitcode.Usage, "refusing to listen on %s without TLS: it is not a loopback address; give --tls-cert and --tls-key, or listen on 127.0.0.1", s.opts.Listen)
		}
		ln, err := net.Listen("tcp", s.opts.Listen)
		if err != nil {
			return nil, "", err
		}
		return ln, "http://" + ln.Addr().String(), nil
	}
	path := s.opts.Socket
	if path == "" {
		var err error
		if path, err = DefaultSocket(); err != nil {
			return nil, "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, "", err
	}
	if conn, err := net.Dial("unix", path); err == nil {
		conn.Close()
		return nil, "", exitcode.New(exitcode.Refused, "another server listens on %s: stop it, or give --socket", path)
	} else if errors.Is(err, syscall.ECONNREFUSED) {
		os.Remove(path) // left by a server that died
	}
	// The socket is made mode 0600: no moment exists when another user
	// could connect.
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, "", err
	}
	s.socket = path
	return ln, "unix:" + path, nil
}

// authorized reports whether a request may be served: every request on
// the socket (its mode keeps others out), a TCP request only with the
// token. /healthz needs none.
func (s *server) authorized(r *http.Request) bool {
	if s.token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.token)) == 1
}

// check refuses (exit 2) options that do not go together.
func (o Options) check() error {
	switch {
	case o.Socket != "" && o.Listen != "":
		return exitcode.New(exitcode.Usage, "--socket and --listen do not go together: give one")
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return exitcode.New(exitcode.Usage, "--tls-cert and --tls-key go together: give both")
	case o.TLSCert != "" && o.Listen == "":
		return exitcode.New(exitcode.Usage, "TLS is for --listen: a unix socket is served without it")
	case o.MaxRunning < 0:
		return exitcode.New(exitcode.Usage, "--max-running must be 1 or more")
	}
	return nil
}

// maxRunning is the cap on running commands.
func (o Options) maxRunning() int {
	if o.MaxRunning > 0 {
		return o.MaxRunning
	}
	return runtime.NumCPU()
}

// realRoot is the main working tree of the repository holding dir.
func realRoot(ctx context.Context, dir string) (string, error) {
	g, err := gitx.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	return hostpath.RealPath(g.MainRoot()), nil
}
