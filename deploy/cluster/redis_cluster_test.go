package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"broll/embed/embedtest"
	"broll/internal/freeport"
	"broll/internal/testkit"
)

// TestRedisClusterRefused: pointed at a Redis Cluster node, the API, the
// worker and brollctl each exit non-zero at start and say what to use
// instead, rather than start and fall back to per-node limits on every
// MOVED answer. One node in cluster mode is enough: it says
// cluster_enabled:1 like any other.
func TestRedisClusterRefused(t *testing.T) {
	t.Parallel()
	_, dbURL := testkit.NewPool(t)
	port, dir := freeport.Must(t), t.TempDir()
	srv := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--save", "", "--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"))
	if err := srv.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Process.Signal(syscall.SIGKILL); _ = srv.Wait() })
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	defer c.Close()
	eventually(t, 10*time.Second, "the cluster node answers", func() error {
		info, err := c.Info(context.Background(), "cluster").Result()
		if err == nil && !strings.Contains(info, "cluster_enabled:1") {
			return fmt.Errorf("not in cluster mode: %q", info)
		}
		return err
	})
	env := baseEnv(t, dbURL, fmt.Sprintf("redis://127.0.0.1:%d/0", port), embedtest.NewOllama(t, embedtest.Options{}).URL)

	wantRefusal := func(t *testing.T, program string, code error, out string) {
		t.Helper()
		if code == nil {
			t.Fatalf("%s exited 0 on a Redis Cluster:\n%s", program, out)
		}
		for _, s := range []string{"Redis Cluster", "redis-sentinel://", "redis://"} {
			if !strings.Contains(out, s) {
				t.Errorf("%s's message does not mention %s:\n%s", program, s, out)
			}
		}
	}
	for _, program := range []string{"broll-api", "broll-worker"} {
		t.Run(program, func(t *testing.T) {
			p := start(t, program, with(env, map[string]string{"BROLL_HTTP_ADDR": "127.0.0.1:0",
				"BROLL_METRICS_ADDR": "127.0.0.1:0", "BROLL_WORKER_HTTP_ADDR": "127.0.0.1:0"}))
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s still running on a Redis Cluster:\n%s", program, p.tail(20))
			}
			wantRefusal(t, program, p.exitErr(), p.tail(20))
		})
	}
	t.Run("brollctl", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(bin, "brollctl"), "clips", "status")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		wantRefusal(t, "brollctl", cmd.Run(), out.String())
	})
}
