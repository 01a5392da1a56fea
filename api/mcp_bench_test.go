package api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
)

// BenchmarkMCPGetBalance measures the latency of one get_balance tool call
// next to the same summary over REST (GET /api/v1/balance): same node, same
// key, real HTTP on loopback, one call at a time. Each iteration makes one
// REST call and one MCP call, so both see the same machine load; the
// metrics are rest-ns/call, mcp-ns/call and their difference, added-ns/call.
// "raw" posts the JSON-RPC message itself (what the MCP layer adds on the
// server); "client" goes through the go-sdk client as an assistant's host
// would (adds the client's own JSON-RPC work).
//
//	go test -run '^$' -bench MCP -benchtime 3s -count 5 ./api/ | benchstat -
func BenchmarkMCPGetBalance(b *testing.B) {
	e := setup(b, envOpts{perMinute: 1_000_000})
	base := e.serveLoopback(b)
	acct := billingtest.NewAccount(b, e.pool, billingtest.AccountOpts{Credits: 1000})
	key := acct.CustomerKey(b, e.pool, "bench").Secret
	client := &http.Client{Transport: bearerTransport{key}}

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
	rest := func(b *testing.B) {
		req, _ := http.NewRequest("GET", base+"/api/v1/balance", nil)
		do(b, req)
	}
	pair := func(b *testing.B, mcpCall func(b *testing.B)) {
		var restTime, mcpTime time.Duration
		for b.Loop() {
			t0 := time.Now()
			rest(b)
			t1 := time.Now()
			mcpCall(b)
			restTime, mcpTime = restTime+t1.Sub(t0), mcpTime+time.Since(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(restTime.Nanoseconds())/n, "rest-ns/call")
		b.ReportMetric(float64(mcpTime.Nanoseconds())/n, "mcp-ns/call")
		b.ReportMetric(float64((mcpTime-restTime).Nanoseconds())/n, "added-ns/call")
	}

	b.Run("raw", func(b *testing.B) {
		pair(b, func(b *testing.B) {
			req, _ := http.NewRequest("POST", base+mcpPath, strings.NewReader(toolsCallBalance))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", legacyProtocol)
			do(b, req)
		})
	})
	b.Run("client", func(b *testing.B) {
		cs := mcpMustConnect(b, base, key)
		pair(b, func(b *testing.B) {
			res, err := cs.CallTool(context.Background(), mcpCall("get_balance"))
			if err != nil || res.IsError {
				b.Fatalf("%v %v", res, err)
			}
		})
	})
}
