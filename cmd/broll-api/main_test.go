package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"broll/internal/config"
	"broll/internal/testkit"
)

// TestRunServesAndShutsDown starts the real node on a free port, checks the
// health endpoints and a bad configuration, and stops it cleanly.
func TestRunServesAndShutsDown(t *testing.T) {
	_, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	env := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix, "BROLL_HTTP_ADDR": "127.0.0.1:0", "BROLL_METRICS_ADDR": "127.0.0.1:0",
		"BROLL_MEDIA_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(),
		// Below the 30 s a silent connection may wait for its request, above
		// the 5 s after which the server counts a connection with no request
		// yet as idle (as net/http does).
		"BROLL_SHUTDOWN_TIMEOUT": "8s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs := &testkit.SyncBuffer{}
	go func() { done <- run(ctx, func(k string) string { return env[k] }, logs, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run exited: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("not ready")
	}
	metricsAddr := loggedMetricsAddr(t, logs.String())
	// Ready once its catalog is warm (503 until then), as a load balancer
	// sees it.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == 200 {
			break
		}
		if res.StatusCode != 503 || !strings.Contains(string(body), `"warmup":"warming"`) || time.Now().After(deadline) {
			t.Fatalf("readyz while starting: %d %s", res.StatusCode, body)
		}
	}
	for url, want := range map[string]int{
		"http://" + addr + "/healthz": 200, "http://" + addr + "/readyz": 200, "http://" + addr + "/api/v1/keys": 401,
		// Metrics only on their own listener, which serves nothing else.
		"http://" + addr + "/metrics": 404, "http://" + metricsAddr + "/metrics": 200,
		"http://" + metricsAddr + "/healthz": 404, "http://" + metricsAddr + "/api/v1/keys": 404,
	} {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s: %d %s", url, res.StatusCode, body)
		}
		if want == 200 && strings.HasSuffix(url, "/metrics") && !strings.Contains(string(body), "broll_rate_limiter_fallbacks_total") {
			t.Errorf("%s lacks the API's metrics", url)
		}
	}
	// A connection opened and never written to, as a browser's preconnect
	// or an HTTP client's spare dial leaves, must not hold the shutdown
	// until its read deadline.
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	time.Sleep(100 * time.Millisecond) // accepted and waiting for a request
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("did not shut down")
	}
	if strings.Contains(logs.String(), env["BROLL_SIGNING_KEY"]) {
		t.Fatal("signing key logged")
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	err := run(context.Background(), func(k string) string {
		return map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1", "BROLL_DOWNLOAD_URL_TTL": "soon", "BROLL_SIGNING_KEY": "0123456789abcdef0123456789abcdef"}[k]
	}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "BROLL_DOWNLOAD_URL_TTL") {
		t.Fatalf("got %v", err)
	}
}

// loggedMetricsAddr is the metrics listener's address from the
// "api listening" log line, which run writes before it reports ready.
func loggedMetricsAddr(t *testing.T, logs string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		var rec struct {
			Msg         string `json:"msg"`
			MetricsAddr string `json:"metrics_addr"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "api listening" {
			return rec.MetricsAddr
		}
	}
	t.Fatalf("no api listening line in %s", logs)
	return ""
}
