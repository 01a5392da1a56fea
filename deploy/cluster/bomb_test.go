package cluster

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/config"
	"broll/internal/testkit"
)

// TestGzipBomb posts a gzip body that inflates to nearly 1 GiB (and is
// itself just under BROLL_MAX_BODY_BYTES, so that the raw limit lets it in)
// to the REST purchase and the MCP endpoint of a real API process: each
// answer is 413, and the process's memory high-water mark (VmHWM) grows by
// no more than a small multiple of the limit. Before the bounded reader,
// one such body took 41 s and 3.9 GB of resident memory.
func TestGzipBomb(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	api := startAPI(t, sharedEnv(t, dbURL, rds, embedtest.NewOllama(t, embedtest.Options{}).URL))
	key := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000}).RootKey.Secret
	limit := config.Defaults().MaxBodyBytes

	bomb, inflated := gzipBomb(t, limit)
	t.Logf("bomb: %d bytes of gzip inflating to %d MiB", len(bomb), inflated>>20)

	// A request of each kind first, so that the baseline includes what
	// serving them normally costs.
	if r := call(t, api.url, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": []string{}}); r.status != 400 {
		t.Fatalf("warm-up purchase: %d %s", r.status, r.raw)
	}
	if r := postBomb(t, api.url+"/api/mcp", key, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), ""); r.status != 200 {
		t.Fatalf("warm-up tools/list: %d %s", r.status, r.raw)
	}
	before := vmHWM(t, api.cmd.Process.Pid)

	for _, path := range []string{"/api/v1/broll/purchase", "/api/mcp", "/api/v1/broll/purchase", "/api/mcp"} {
		start := time.Now()
		r := postBomb(t, api.url+path, key, bomb, "gzip")
		took := time.Since(start)
		wantProblem(t, path, r, 413, "payload_too_large")
		t.Logf("%s: 413 in %s", path, took.Round(time.Millisecond))
	}
	after := vmHWM(t, api.cmd.Process.Pid)
	t.Logf("VmHWM before %d KiB, after %d KiB (limit %d KiB)", before>>10, after>>10, limit>>10)
	// Each refused bomb leaves its 1 MiB compressed body and up to twice
	// the limit of inflated buffer as garbage until the next collection,
	// and four of them may come before one (GOGC 100 over a heap of a few
	// MiB): runs measured 3.5 to 8.6 MiB of growth. Sixteen times the
	// limit holds that, and is still a sixty-fourth of what inflating one
	// bomb would take.
	if grown := after - before; grown > int64(16*limit) {
		t.Errorf("resident memory high-water mark grew by %d KiB, more than 16x the %d KiB body limit", grown>>10, limit>>10)
	}
}

// gzipBomb builds, without ever holding the inflated bytes, a gzip body of
// at most limit bytes that inflates to as many zeros as fit: one gzip
// member of 64 MiB of zeros, repeated (readers take concatenated members as
// one stream).
func gzipBomb(t *testing.T, limit int) (body []byte, inflated int64) {
	t.Helper()
	const memberSize = 64 << 20
	var member bytes.Buffer
	zw, err := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range memberSize / len(zeros) {
		if _, err := zw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for len(body)+member.Len() <= limit && inflated < 1<<30 {
		body = append(body, member.Bytes()...)
		inflated += memberSize
	}
	if inflated < 512<<20 {
		t.Fatalf("a %d-byte bomb inflates to only %d MiB", len(body), inflated>>20)
	}
	return body, inflated
}

// postBomb sends body as it is, with the given Content-Encoding, in the
// way both the REST and MCP endpoints accept.
func postBomb(t *testing.T, url, key string, body []byte, encoding string) reply {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := reply{status: res.StatusCode, header: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// vmHWM is a process's peak resident set size in bytes, from /proc.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc status for the API process: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
