package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"broll/api"
	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// TestPostedClipIsSearchableInSeconds: a clip posted through the ops API,
// with a real MP4 and nothing else (no figures, no preview), is found by a
// customer's keyword search once the real worker beside the API has
// probed, embedded and put it on sale. The bound is generous for a loaded
// machine; the benchmark (make bench-import) measures the time.
func TestPostedClipIsSearchableInSeconds(t *testing.T) {
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	dir := t.TempDir()
	env := map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix,
		"BROLL_EMBED_PROVIDER": "builtin", "BROLL_WORKER_HTTP_ADDR": "127.0.0.1:0", "BROLL_SIGNING_KEY": config.GenerateSecret(),
		"BROLL_MEDIA_DIR": filepath.Join(dir, "media"), "BROLL_IMPORT_DIR": filepath.Join(dir, "import")}
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() { done <- run(ctx, getenv, io.Discard, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("worker: %v", err)
	}

	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	g := wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.APIParts, Pool: pool, Redis: rds.Client})
	node, err := api.NewNode(g)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = node.App.Listener(ln) }()
	defer func() { _ = node.App.Shutdown() }()
	base := "http://" + ln.Addr().String()

	if err := os.MkdirAll(cfg.ImportDir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(testkit.RenderVideo(t, 320, 180, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.ImportDir, "zebra.mp4"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	ops, err := g.Tenancy.CreateOpsKey(ctx, "content team")
	if err != nil {
		t.Fatal(err)
	}
	customer := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100}).CustomerKey(t, pool, "alice")

	call := func(method, path, key string, body any) (int, []byte) {
		t.Helper()
		var r io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			r = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, base+path, r)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, out
	}
	start := time.Now()
	if status, out := call("POST", "/api/ops/v1/videos", ops.Secret, []map[string]any{{"title": "Zebra crossing at dawn",
		"emotion": "happy", "gender": "female", "difficulty": "easy", "media_file": "zebra.mp4"}}); status != 200 {
		t.Fatalf("post clip: %d %s", status, out)
	}
	var found struct {
		Videos []struct {
			Title       string `json:"title"`
			Orientation string `json:"orientation"`
		} `json:"videos"`
	}
	deadline := start.Add(60 * time.Second)
	for {
		status, out := call("GET", "/api/v1/broll?search=zebra", customer.Secret, nil)
		if status != 200 {
			t.Fatalf("search: %d %s", status, out)
		}
		if err := json.Unmarshal(out, &found); err != nil {
			t.Fatal(err)
		}
		if len(found.Videos) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the posted clip is not searchable after 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("searchable %s after the post", time.Since(start).Round(time.Millisecond))
	if v := found.Videos[0]; v.Title != "Zebra crossing at dawn" || v.Orientation != "horizontal" {
		t.Fatalf("found %+v, want the clip with the probe's orientation", v)
	}
	var vectors int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM videos WHERE embedding IS NOT NULL AND retired_at IS NULL`).Scan(&vectors); err != nil || vectors != 1 {
		t.Fatalf("clips on sale with a vector: %d, %v", vectors, err)
	}
}
