package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// loadResult is the healthz load row: requests answered by many
// keep-alive clients at once, over loopback.
type loadResult struct {
	Clients   int     `json:"clients"`
	Seconds   float64 `json:"seconds"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	PerSecond float64 `json:"requests_per_second"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
}

// apiServer is a `git apex serve` on a loopback port, for the API rows.
type apiServer struct {
	cmd    *exec.Cmd
	base   string
	token  string
	client *http.Client
}

// serve starts `git apex serve --listen 127.0.0.1:0` in the bench's
// repository and waits until it listens.
func (b *bench) serve() (*apiServer, error) {
	token, err := b.output(b.apex("serve", "--print-token"))
	if err != nil {
		return nil, err
	}
	s := &apiServer{cmd: b.apex("serve", "--listen", "127.0.0.1:0"), token: token,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		// "git-apex serve: serving REPO on ADDR": the repository's path
		// may hold " on " too.
		if i := strings.LastIndex(sc.Text(), " on "); i >= 0 {
			s.base = sc.Text()[i+len(" on "):]
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if s.base == "" {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		return nil, fmt.Errorf("git apex serve did not start")
	}
	return s, nil
}

func (s *apiServer) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}

// call sends a request and reads the whole answer; a status other than
// want is an error.
func (s *apiServer) call(method, path, body string, want int) error {
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != want {
		err = fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	return err
}

// api measures the HTTP API against the command line doing the same
// job: POST /workflows against `git apex start`, and GET /worktrees with
// n envs against `git apex list --json`; then the healthz load.
func (b *bench) api(n int) ([]row, *loadResult, error) {
	s, err := b.serve()
	if err != nil {
		return nil, nil, err
	}
	defer s.stop()
	post, err := b.measure("POST /workflows", "git apex start",
		func() (time.Duration, error) {
			id := "task-" + b.next("p")
			start := time.Now()
			if err := s.call("POST", "/api/developer/workflows", `{"id": "`+id+`"}`, http.StatusCreated); err != nil {
				return 0, err
			}
			d := time.Since(start)
			return d, untimed(b.apex("remove", "--force", "--delete-branch", id))
		},
		b.apexStart)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	defer func() {
		for _, id := range ids {
			untimed(b.apex("remove", "--force", "--delete-branch", id))
		}
	}()
	for range n {
		id := "task-" + b.next("w")
		if err := untimed(b.apex("start", id)); err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
	}
	get, err := b.measure(fmt.Sprintf("GET /worktrees (%d envs)", n), "git apex list --json",
		func() (time.Duration, error) {
			start := time.Now()
			err := s.call("GET", "/api/developer/worktrees", "", http.StatusOK)
			return time.Since(start), err
		},
		func() (time.Duration, error) { return timed(b.apex("list", "--json")) })
	if err != nil {
		return nil, nil, err
	}
	load := s.load(b.cfg.loadClients, b.cfg.loadTime)
	return []row{post, get}, load, nil
}

// load sends GET /healthz from clients keep-alive clients at once for d,
// and summarizes what they saw.
func (s *apiServer) load(clients int, d time.Duration) *loadResult {
	fmt.Fprintf(os.Stderr, "bench: GET /healthz, %d clients for %v\n", clients, d)
	var mu sync.Mutex
	var latencies []time.Duration
	errs := 0
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := s.call("GET", "/healthz", "", http.StatusOK); err != nil {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			latencies, errs = append(latencies, mine...), errs+bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	res := &loadResult{Clients: clients, Seconds: elapsed.Seconds(), Requests: len(latencies), Errors: errs,
		PerSecond: float64(len(latencies)) / elapsed.Seconds()}
	if len(latencies) > 0 {
		res.P50Ms = ms(latencies[len(latencies)/2])
		res.P99Ms = ms(latencies[len(latencies)*99/100])
	}
	return res
}
