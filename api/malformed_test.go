package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// malformedCount is how many requests one run sends: enough to cover every
// route with every kind of bad input several times, within a few seconds.
const malformedCount = 3000

// defaultMalformedSeed makes runs reproducible; set BROLL_MALFORMED_SEED to
// explore other sequences.
const defaultMalformedSeed = 20260801

// TestMalformedRequestsAtScale sends a few thousand malformed requests to
// every route over real HTTP and checks that none gets a 5xx, that every
// error is problem+json with a code and the HTTP status in its body, and
// that nothing changed: the pool, the purchases, the keys and the catalog
// are as they were.
func TestMalformedRequestsAtScale(t *testing.T) {
	t.Parallel()
	seed := uint64(defaultMalformedSeed)
	if s := os.Getenv("BROLL_MALFORMED_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("BROLL_MALFORMED_SEED: %v", err)
		}
		seed = n
	}
	// A limit no run reaches: 429s would hide the handlers behind the edge.
	e := setup(t, envOpts{perMinute: 1_000_000})
	// v0 enabled, with a clock before its sunset.
	node := e.legacyNode(t, newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
	base := serveNode(t, e, node)

	f, acct := malformedFixture(t, e, node)
	before := snapshot(t, e.pool, acct.ID)

	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), f: f}
	reqs := make([]badReq, malformedCount)
	for i := range reqs {
		reqs[i] = g.next()
	}

	results := sendAll(t, base, reqs)
	var failures []string
	seen := map[string]map[int]int{} // kind -> status -> count
	for i, res := range results {
		r := reqs[i]
		if seen[r.kind] == nil {
			seen[r.kind] = map[int]int{}
		}
		seen[r.kind][res.status]++
		if msg := judge(r, res); msg != "" {
			failures = append(failures, fmt.Sprintf("#%d %s %s %q headers %q body %q: %s", i, r.kind, r.method, clip(r.path, 160), r.header, clip(string(r.body), 160), clip(msg, 400)))
		}
	}
	for i, msg := range failures {
		if i == 30 {
			t.Errorf("... and %d more", len(failures)-30)
			break
		}
		t.Error(msg)
	}
	if len(failures) > 0 {
		t.Errorf("seed %d: %d of %d requests failed the contract (rerun with BROLL_MALFORMED_SEED=%d)", seed, len(failures), len(reqs), seed)
	}

	// Every kind of request must have reached its handler at least once;
	// a run answered wholly by the edge (401, 429) would prove nothing.
	kinds := make([]string, 0, len(seen))
	for kind, statuses := range seen {
		kinds = append(kinds, kind)
		past := 0
		for status, n := range statuses {
			if status != http.StatusUnauthorized && status != http.StatusTooManyRequests {
				past += n
			}
		}
		if past == 0 {
			t.Errorf("%s: no request got past authentication: %v", kind, statuses)
		}
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		t.Logf("%-18s %v", kind, seen[kind])
	}

	if after := snapshot(t, e.pool, acct.ID); after != before {
		t.Errorf("malformed requests changed state:\nbefore %+v\nafter  %+v", before, after)
	}
}

// malformedFixture makes the account, keys, clips and the one real purchase
// (with its media) that the generated requests aim at.
func malformedFixture(t *testing.T, e *testEnv, node int) (fixture, billingtest.Account) {
	t.Helper()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000, Legacy: true})
	cust := acct.CustomerKey(t, e.pool, "malformed input")
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "malformed ops")
	if err != nil {
		t.Fatal(err)
	}
	vids := billingtest.Videos(t, e.pool, 3, "easy")
	e.putMedia(t, vids[0], bytes.Repeat([]byte("0123456789"), 100))
	link, err := url.Parse(downloadLink(e.buy(t, node, cust.Secret, vids[0]).Purchases, 0))
	if err != nil {
		t.Fatal(err)
	}
	col := expect[brollclient.Collection](t, e.do(t, node, "POST", "/api/v1/collections", cust.Secret, map[string]any{"name": "malformed input"}), 201)
	expect[brollclient.Collection](t, e.do(t, node, "PUT", "/api/v1/collections/"+col.Id.String()+"/items", cust.Secret,
		map[string]any{"video_ids": vids}), 200)
	return fixture{rootKey: acct.RootKey.Secret, custKey: cust.Secret, opsKey: ops.Secret,
		legacySecret: testLegacySecret, source: acct.Source, videos: vids, downloadPath: link.RequestURI(),
		collection: col.Id.String()}, acct
}

// serveNode serves node n on a loopback port and returns its base URL.
func serveNode(t *testing.T, e *testEnv, n int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := e.nodes[n].app
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}

// state is what no malformed request may change. (Downloads are not in
// it: a valid link with a hostile Range header is served, and logged.)
type state struct {
	Balance, Purchases, Ledger     int64
	Keys, Revoked, Videos, Retired int64
	// Collections, Items and Edits: the collections and their clips, and
	// the latest change of any.
	Collections, Items int64
	Edits              string
}

func snapshot(t *testing.T, pool *pgxpool.Pool, account any) state {
	t.Helper()
	var s state
	err := pool.QueryRow(context.Background(), `SELECT
		(SELECT balance_cents FROM accounts WHERE id = $1),
		(SELECT count(*) FROM purchases WHERE account_id = $1),
		(SELECT count(*) FROM ledger),
		(SELECT count(*) FROM api_keys), (SELECT count(revoked_at) FROM api_keys),
		(SELECT count(*) FROM videos), (SELECT count(retired_at) FROM videos),
		(SELECT count(*) FROM collections), (SELECT count(*) FROM collection_items),
		(SELECT coalesce(max(updated_at)::text, '') FROM collections)`,
		account).Scan(&s.Balance, &s.Purchases, &s.Ledger, &s.Keys, &s.Revoked, &s.Videos, &s.Retired,
		&s.Collections, &s.Items, &s.Edits)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type result struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// sendAll sends the requests over a few connections at once, as clients
// would, and returns the results in request order.
func sendAll(t *testing.T, base string, reqs []badReq) []result {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	out := make([]result, len(reqs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = send(client, base, reqs[i])
			}
		}()
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// maxBodyBytes is BROLL_MAX_BODY_BYTES's default, which setup keeps.
const maxBodyBytes = 1 << 20

func send(client *http.Client, base string, r badReq) result {
	if len(r.body) > maxBodyBytes {
		return sendOversized(base, r)
	}
	u, err := url.Parse(base + r.path)
	if err != nil {
		return result{err: fmt.Errorf("generator made an unsendable URL: %w", err)}
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, base, body)
	if err != nil {
		return result{err: err}
	}
	req.URL = u
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return result{status: res.StatusCode, header: res.Header, body: raw, err: err}
}

// sendOversized announces a body over the limit on a raw connection and
// sends only its start: the server must refuse it from the headers, and a
// client writing the whole body would race the connection's reset.
func sendOversized(base string, r badReq) result {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		return result{err: err}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n", r.method, r.path, len(r.body))
	for k, v := range r.header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.Write(r.body[:1024])
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return result{err: err}
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return result{err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return result{status: res.StatusCode, header: res.Header, body: raw, err: err}
}

// judge returns what is wrong with one answer, or "".
func judge(r badReq, res result) string {
	if res.err != nil {
		return "no answer: " + res.err.Error()
	}
	if res.status >= 500 {
		return fmt.Sprintf("status %d: %s", res.status, clip(string(res.body), 300))
	}
	if r.kind == "oversized" && res.status != http.StatusRequestEntityTooLarge {
		return fmt.Sprintf("oversized body got %d, want 413: %s", res.status, clip(string(res.body), 200))
	}
	if res.status < 300 {
		if r.kind == "mcp" {
			return judgeJSONRPC(res.body)
		}
		return ""
	}
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		return fmt.Sprintf("status %d with Content-Type %q: %s", res.status, ct, clip(string(res.body), 200))
	}
	var p brollclient.Problem
	if err := json.Unmarshal(res.body, &p); err != nil {
		return fmt.Sprintf("status %d: problem body is not JSON: %v", res.status, err)
	}
	if p.Status != res.status || p.Code == "" || p.Detail == "" || p.RequestId == "" {
		return fmt.Sprintf("status %d: problem body %s", res.status, clip(string(res.body), 200))
	}
	return ""
}

// judgeJSONRPC checks a 200 answer of the MCP endpoint: JSON-RPC errors are
// the client's (parse, invalid params), never the server's, and a tool's
// error result carries a client-side code.
func judgeJSONRPC(body []byte) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return "" // an accepted notification
	}
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result *struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Sprintf("MCP 200 body is not one JSON-RPC message: %v: %s", err, clip(string(body), 200))
	}
	if m.Error != nil && m.Error.Code == -32603 {
		return "MCP internal error: " + m.Error.Message
	}
	if m.Result != nil && m.Result.IsError {
		code, _ := m.Result.StructuredContent["code"].(string)
		if code == "" || code == "internal" || code == "unavailable" {
			return fmt.Sprintf("MCP tool error with code %q: %s", code, clip(string(body), 300))
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
