package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// BenchmarkMCPGetCollection measures get_collection next to GET
// /api/v1/collections/{id}, a first page of 50 clips of a collection of
// 5,000, as BenchmarkMCPGetBalance measures get_balance: same node, same
// key, real HTTP on loopback, one REST call and one raw JSON-RPC call per
// iteration; rest-ns/call, mcp-ns/call and added-ns/call.
//
//	go test -run '^$' -bench MCPGetCollection -benchtime 3s -count 5 ./api/ | benchstat -
func BenchmarkMCPGetCollection(b *testing.B) {
	const clips, perAdd = 5000, 50
	e := setup(b, envOpts{perMinute: 1_000_000})
	base := e.serveLoopback(b)
	acct := billingtest.NewAccount(b, e.pool, billingtest.AccountOpts{Credits: 1000})
	key := acct.CustomerKey(b, e.pool, "bench").Secret
	vids := billingtest.Videos(b, e.pool, clips, "easy")
	client := &http.Client{Transport: bearerTransport{key}}
	send := func(method, path string, body any) []byte {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
		}
		return out
	}
	var made brollclient.Collection
	if err := json.Unmarshal(send("POST", "/api/v1/collections", map[string]any{"name": "bench"}), &made); err != nil {
		b.Fatal(err)
	}
	col := made.Id.String()
	for i := 0; i < clips; i += perAdd {
		send("PUT", "/api/v1/collections/"+col+"/items", map[string]any{"video_ids": vids[i : i+perAdd]})
	}
	do := func(b *testing.B, req *http.Request) {
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_collection","arguments":{"collection_id":%q,"limit":50}}}`, col)
	var restTime, mcpTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		req, _ := http.NewRequest("GET", base+"/api/v1/collections/"+col+"?limit=50", nil)
		do(b, req)
		t1 := time.Now()
		req, _ = http.NewRequest("POST", base+mcpPath, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", legacyProtocol)
		do(b, req)
		restTime, mcpTime = restTime+t1.Sub(t0), mcpTime+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(restTime.Nanoseconds())/n, "rest-ns/call")
	b.ReportMetric(float64(mcpTime.Nanoseconds())/n, "mcp-ns/call")
	b.ReportMetric(float64((mcpTime-restTime).Nanoseconds())/n, "added-ns/call")
}
