package api

import (
	"fmt"
	"net/url"
	"strings"

	"broll/billing"
)

// authHeader is a working key most of the time, otherwise a broken header.
func (g *gen) authHeader(key string) map[string]string {
	h := map[string]string{}
	switch g.r.IntN(12) {
	case 0:
	case 1:
		h["Authorization"] = g.pick([]string{"Bearer", "Bearer ", "Basic Zm9vOmJhcg==", "bearer  " + key + "x", "Bearer dsk_",
			"Bearer " + strings.Repeat("dsk_A", 500), "Bearer " + key + " " + key, "Bearer dsk_%00", "Token " + key})
	default:
		h["Authorization"] = "Bearer " + key
	}
	return h
}

func (g *gen) contentType(h map[string]string) map[string]string {
	h["Content-Type"] = g.pick([]string{"application/json", "application/json", "application/json", "text/plain",
		"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16",
		"application/problem+json", "*/*", "", "application/json; charset=\xff"})
	return h
}

// next returns one malformed request.
func (g *gen) next() badReq {
	root, cust := g.f.rootKey, g.f.custKey
	key := root
	if g.chance(0.4) {
		key = cust
	}
	switch n := g.r.IntN(100); {
	case n < 12:
		return badReq{kind: "broll list", method: "GET", path: "/api/v1/broll" + g.query(catalogParams, nil), header: g.authHeader(key)}
	case n < 15:
		return badReq{kind: "broll filters", method: "GET", path: "/api/v1/broll/filters" + g.query(catalogParams, nil), header: g.authHeader(key)}
	case n < 21:
		return badReq{kind: "broll get", method: "GET", path: "/api/v1/broll/" + g.pathID(), header: g.authHeader(key)}
	case n < 33:
		return badReq{kind: "purchase", method: "POST", path: "/api/v1/broll/purchase", header: g.contentType(g.authHeader(key)),
			body: []byte(g.purchaseBody(false))}
	case n < 42:
		return badReq{kind: "purchases", method: "GET", path: "/api/v1/broll/purchases" + g.query(purchaseListParams, nil), header: g.authHeader(key)}
	case n < 47:
		return badReq{kind: "keys create", method: "POST", path: "/api/v1/keys", header: g.contentType(g.authHeader(key)), body: []byte(g.keyBody())}
	case n < 50:
		return badReq{kind: "keys revoke", method: "DELETE", path: "/api/v1/keys?id=" + g.esc(g.badID()), header: g.authHeader(key)}
	case n < 52:
		return badReq{kind: "keys list", method: "GET", path: "/api/v1/keys" + g.query([]string{"id", "limit"}, nil), header: g.authHeader(key)}
	case n < 54:
		return badReq{kind: "balance/pricing", method: "GET", path: g.pick([]string{"/api/v1/balance", "/api/v1/pricing"}) +
			g.query([]string{"limit", "start_date"}, nil), header: g.authHeader(key)}
	case n < 66:
		// Mostly the headers the transport wants, so that most calls reach
		// the tools rather than stop at the SDK's checks.
		h := g.authHeader(key)
		if h["Content-Type"] = "application/json"; g.chance(0.15) {
			h = g.contentType(h)
		}
		if g.chance(0.9) {
			h["Accept"] = "application/json, text/event-stream"
		} else {
			h["Accept"] = g.pick([]string{"text/html", "", "application/json", "*/*"})
		}
		if g.chance(0.05) {
			h["Origin"] = g.pick([]string{"https://evil.example", "null", "\xff"})
		}
		return badReq{kind: "mcp", method: "POST", path: "/api/mcp", header: h, body: []byte(g.mcpBody())}
	case n < 74:
		return g.legacy()
	case n < 82:
		return g.download()
	case n < 87:
		ops := g.authHeader(g.f.opsKey)
		if g.chance(0.5) {
			return badReq{kind: "ops import", method: "POST", path: "/api/ops/v1/videos", header: g.contentType(ops), body: []byte(g.clipsBody())}
		}
		return badReq{kind: "ops retire", method: "DELETE", path: "/api/ops/v1/videos/" + g.pathID(), header: ops}
	case n < 89:
		return badReq{kind: "media", method: "GET", path: g.pick([]string{"/media/previews/", "/media/thumbnails/"}) +
			g.pathID(), header: map[string]string{"If-None-Match": fit(headerSafe(g.text()), 1500, func(s string) string { return s })}}
	case n < 92:
		return g.collections(key)
	case n < 96:
		// A route's path with a method it does not have.
		p := g.pick([]string{"/api/v1/broll", "/api/v1/broll/purchase", "/api/v1/keys", "/api/v1/balance", "/api/mcp",
			"/api/v1/broll/" + g.f.videos[0].String(), "/api/ops/v1/videos", "/healthz", "/api/external/broll/purchase",
			"/api/v1/collections", "/api/v1/collections/" + g.f.collection + "/items"})
		m := g.pick([]string{"PUT", "PATCH", "DELETE", "GET", "POST", "OPTIONS", "TRACE", "PROPFIND"})
		return badReq{kind: "wrong method", method: m, path: p, header: g.authHeader(key), body: []byte(g.pick([]string{"", "{}", "[]"}))}
	default:
		// Over BROLL_MAX_BODY_BYTES, on every route that reads a body.
		p := g.pick([]string{"/api/v1/broll/purchase", "/api/v1/keys", "/api/mcp", "/api/ops/v1/videos", "/api/external/broll/purchase",
			"/api/v1/collections"})
		body := `{"video_ids":["` + strings.Repeat("a", 1<<20) + `"]}`
		// A working key: a broken header could be refused for its own sake.
		h := g.contentType(map[string]string{"Authorization": "Bearer " + key})
		return badReq{kind: "oversized", method: "POST", path: p, header: h, body: []byte(body)}
	}
}

func (g *gen) legacy() badReq {
	h := map[string]string{}
	switch g.r.IntN(6) {
	case 0:
		h["X-API-Key"] = g.pick([]string{g.f.legacySecret + "x", "", "\xff"})
	case 1:
		h["X-API-Key"] = g.f.legacySecret
	default:
		h["Authorization"] = "Bearer " + g.f.legacySecret
	}
	source := g.f.source
	if g.chance(0.3) {
		source = g.text()
	}
	switch g.r.IntN(4) {
	case 0:
		return badReq{kind: "legacy list", method: "GET", path: "/api/external/broll" + g.query(catalogParams, map[string]string{"source": source}), header: h}
	case 1:
		return badReq{kind: "legacy get", method: "GET", path: "/api/external/broll/" + g.pathID() + "?source=" + g.esc(source), header: h}
	case 2:
		return badReq{kind: "legacy purchases", method: "GET", path: "/api/external/broll/purchases" +
			g.query(legacyListParams, map[string]string{"source": source}), header: h}
	default:
		extra := []string{`"source":` + g.pick([]string{fmt.Sprintf("%q", g.f.source), g.jsonString(), "7", "null"})}
		if g.chance(0.5) {
			extra = append(extra, `"customer_email":`+g.pick([]string{g.jsonString(), `"not-an-email"`, "7", `"a@b.co"`}))
		}
		return badReq{kind: "legacy purchase", method: "POST", path: "/api/external/broll/purchase", header: g.contentType(h),
			body: []byte(g.purchaseBody(false, extra...))}
	}
}

// download is a signed link with one part broken, or the real link with a
// hostile Range header.
func (g *gen) download() badReq {
	u, err := url.Parse(g.f.downloadPath)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	h := map[string]string{}
	path := u.Path
	switch g.r.IntN(5) {
	case 0:
		path = billing.DownloadPath + g.pathID()
	case 1:
		q.Set("exp", g.number())
	case 2:
		q.Set(g.pick([]string{"kv", "sig"}), fit(g.text(), 1200, url.QueryEscape))
	case 3:
		q.Del(g.pick([]string{"exp", "kv", "sig"}))
	default:
		h["Range"] = g.pick([]string{"bytes=abc", "bytes=999999999999999999999-", "bytes=5-1", "bytes=0-1,3-4", "bytes=-0",
			"bytes=-99999999999999999999", "bytes=" + g.number() + "-" + g.number(), "items=0-1", "bytes=", "bytes=0-",
			"bytes=-1", "bytes=9223372036854775807-", "bytes=\xff"})
	}
	return badReq{kind: "download", method: "GET", path: path + "?" + q.Encode(), header: h}
}

// headerSafe drops the bytes HTTP clients refuse to put in a header (control
// characters); bytes above 0x7f, invalid UTF-8 included, stay as they are.
func headerSafe(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c != 0x7f || c == '\t' {
			b = append(b, c)
		}
	}
	return string(b)
}
