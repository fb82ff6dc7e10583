package hostexec

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Pipe starts argv with env and returns a connection to it: what is
// written goes to its standard input, what it prints is read. It runs in
// a process group of its own, so a Ctrl-C on the terminal does not cut
// the connection. When it ends with a failure, reading returns an error
// with the end of what it printed on standard error. Closing the
// connection closes both pipes and stops it.
func Pipe(argv, env []string) (net.Conn, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &pipeConn{name: argv[0], in: inW, out: outR, exited: make(chan struct{})}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &c.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	c.process = cmd.Process
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// pipeConn is a net.Conn over a process's standard input and output.
type pipeConn struct {
	name    string
	in      *os.File
	out     *os.File
	stderr  tail
	process *os.Process
	exited  chan struct{}
	waitErr error // set before exited is closed
	closing sync.Once
}

func (c *pipeConn) Read(p []byte) (int, error) {
	n, err := c.out.Read(p)
	if n == 0 && err != nil && !errors.Is(err, os.ErrClosed) {
		select {
		case <-c.exited:
			if c.waitErr != nil {
				return 0, fmt.Errorf("%s: %v: %s", c.name, c.waitErr, c.stderr.String())
			}
		case <-time.After(DefaultGrace):
		}
	}
	return n, err
}

func (c *pipeConn) Write(p []byte) (int, error) { return c.in.Write(p) }

// CloseWrite ends the process's input (a hijacked connection's half
// close).
func (c *pipeConn) CloseWrite() error { return c.in.Close() }

// CloseRead stops reading its output.
func (c *pipeConn) CloseRead() error { return c.out.Close() }

// Close closes both pipes and ends the process: TERM to its group, and
// KILL after DefaultGrace if it is still there.
func (c *pipeConn) Close() error {
	c.closing.Do(func() {
		c.in.Close()
		c.out.Close()
		syscall.Kill(-c.process.Pid, syscall.SIGTERM)
		go func() {
			select {
			case <-c.exited:
			case <-time.After(DefaultGrace):
				syscall.Kill(-c.process.Pid, syscall.SIGKILL)
			}
		}()
	})
	return nil
}

func (c *pipeConn) LocalAddr() net.Addr  { return pipeAddr(c.name) }
func (c *pipeConn) RemoteAddr() net.Addr { return pipeAddr(c.name) }

// Deadlines are not supported: a process's pipes have none.
func (c *pipeConn) SetDeadline(time.Time) error      { return nil }
func (c *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// pipeAddr names the program at the other end of a pipe connection.
type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

// tail keeps the last tailSize bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if extra := t.buf.Len() - tailSize; extra > 0 {
		t.buf.Next(extra)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(t.buf.String())
}
