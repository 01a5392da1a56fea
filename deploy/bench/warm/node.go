package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// nodeProc is one cmd/broll-api process.
type nodeProc struct {
	cmd          *exec.Cmd
	url, metrics string
	gated        bool
	started      time.Time
	done         chan struct{}

	mu    sync.Mutex
	lines []string
}

// buildNode builds cmd/broll-api into dir (the benchmark runs from the
// repository's root, as `go run ./deploy/bench/warm` does).
func buildNode(dir string) (string, error) {
	out := dir + "/broll-api"
	cmd := exec.Command("go", "build", "-o", out, "./cmd/broll-api")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build broll-api: %w: %s", err, b)
	}
	return out, nil
}

// startNode runs the binary with exactly env and waits until it listens.
func startNode(binary string, env map[string]string, gated bool) (*nodeProc, error) {
	cmd := exec.Command(binary)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &nodeProc{cmd: cmd, gated: gated, done: make(chan struct{}), started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	listening := make(chan map[string]any, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "api listening" {
				listening <- rec
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case rec := <-listening:
		addr, _ := rec["addr"].(string)
		maddr, _ := rec["metrics_addr"].(string)
		p.url, p.metrics = "http://"+addr, "http://"+maddr
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("broll-api exited:\n%s", p.tail(20))
	case <-time.After(time.Minute):
		p.stop()
		return nil, fmt.Errorf("broll-api did not listen within a minute:\n%s", p.tail(20))
	}
}

// stop ends the process as an orchestrator does (SIGTERM, then SIGKILL).
func (p *nodeProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *nodeProc) tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines[max(0, len(p.lines)-n):], "\n")
}

// lastLogged returns the last log line with message msg, decoded (nil:
// none).
func (p *nodeProc) lastLogged(msg string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.lines) - 1; i >= 0; i-- {
		var rec map[string]any
		if json.Unmarshal([]byte(p.lines[i]), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	return nil
}

// waitReady probes /readyz every 50 ms, as an impatient load balancer
// would, until it answers 200; it returns how many probes were refused.
func (p *nodeProc) waitReady(within time.Duration) (int, error) {
	client := &http.Client{Timeout: 3 * time.Second}
	deadline := time.Now().Add(within)
	refused := 0
	for time.Now().Before(deadline) {
		res, err := client.Get(p.url + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return refused, nil
			}
		}
		refused++
		select {
		case <-p.done:
			return refused, fmt.Errorf("broll-api exited:\n%s", p.tail(20))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return refused, errors.New("/readyz did not answer 200 in time")
}

// metric reads one sample of the node's /metrics ("name" or
// `name{label="value"}`); NaN-free 0 when absent.
func (p *nodeProc) metric(series string) float64 {
	res, err := http.Get(p.metrics + "/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && name == series {
			v, _ := strconv.ParseFloat(value, 64)
			return v
		}
	}
	return 0
}
