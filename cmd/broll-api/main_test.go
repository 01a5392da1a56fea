package main

import (
	"context"
	"io"
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
	_, redisURL := testkit.Redis(t)
	env := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "BROLL_HTTP_ADDR": "127.0.0.1:0",
		"BROLL_MEDIA_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var logs strings.Builder
	go func() { done <- run(ctx, func(k string) string { return env[k] }, &syncWriter{b: &logs}, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run exited: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("not ready")
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/api/v1/keys": 401} {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s: %d %s", path, res.StatusCode, body)
		}
	}
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

type syncWriter struct{ b *strings.Builder }

func (w *syncWriter) Write(p []byte) (int, error) { return w.b.Write(p) }
