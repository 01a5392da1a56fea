package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"broll/internal/freeport"
)

// buildBinaries builds the service's programs of the tree src into dir.
func buildBinaries(src, dir string) error {
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/broll-api", "./cmd/broll-worker", "./cmd/brollctl")
	cmd.Dir = src
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	return nil
}

// proc is a started program; its output goes to a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// start runs bin with args and env (added to a minimal environment),
// logging to dir/name.log.
func start(dir, name, bin string, env map[string]string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		// The program's exit status says nothing a benchmark acts on: it
		// was asked to stop.
		_ = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// stop asks the program to end (SIGTERM) and kills it after 30 s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// startRedis runs a Redis of the benchmark's own on a free port, so that
// its queues meet no other worker of the shared stack.
func startRedis(dir string) (*proc, string, error) {
	port, err := freeport.Pick()
	if err != nil {
		return nil, "", err
	}
	p, err := start(dir, "redis", "redis-server", nil, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	if err != nil {
		return nil, "", err
	}
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	return p, url, waitFor(30*time.Second, func() error {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			_ = c.Close()
		}
		return err
	})
}

// waitHealthy polls url until it answers 200.
func waitHealthy(url string) error {
	return waitFor(60*time.Second, func() error {
		res, err := http.Get(url)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %d", url, res.StatusCode)
		}
		return nil
	})
}

// waitFor polls ok every 50 ms until it returns nil or within passes.
func waitFor(within time.Duration, ok func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := ok()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ctl runs brollctl to completion and returns its standard output.
func ctl(ctx context.Context, bin string, env map[string]string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("brollctl %v: %w: %s", args, err, stderr.String())
	}
	return out.Bytes(), nil
}
