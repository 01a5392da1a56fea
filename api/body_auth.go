package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"broll/api/dashboard"
	"broll/billing"
	"broll/internal/apperr"
)

// bodyUnauthenticated marks a request refused from its headers alone
// (screenBodies): its body is never read, and boundBodies answers it. The
// value says by what: refusedKey, or refusedByRoute when the route's own
// first check (the legacy guard, the MCP origin and method checks) gives
// the answer without reading the body.
const bodyUnauthenticated = "X-Broll-Body-Unauthenticated"

const (
	refusedKey     = "key"
	refusedByRoute = "route"
)

// screenBodies runs when a request's headers are in, before fasthttp reads
// any of its body: of a body of known length it reads up to 8 KiB before
// calling a handler, and waits for them, so a client that announces a
// small body and sends less would hold its answer until the read timeout
// (30 s), whatever the answer. Two answers are known from the headers
// alone, and such requests are marked and their body dropped (Content-Length
// 0, never read; boundBodies answers and closes the connection):
//   - 413 for a body announced over the limit, unless it is an upload;
//   - 401 for a body sent to a route that authenticates by a credential in
//     the headers (an API key for v1, ops and MCP, uploads included; the
//     shared secret for legacy v0) without one, or with one that is
//     malformed or unknown. The request then gets its 401 at once; one
//     with a valid credential has its body read as before. A dashboard
//     form posted without a session is redirected to sign in the same way.
func (s *keyEdge) screenBodies(limit int, x surfaces) func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		h.Del(bodyOverLimit)
		h.Del(bodyUnauthenticated)
		cl := h.ContentLength()
		if cl > limit && !isUploadPut(string(h.Method()), string(h.RequestURI())) {
			h.Set(bodyOverLimit, "1")
			h.SetContentLength(0)
			return fasthttp.RequestConfig{}
		}
		if cl <= 0 && cl != -1 { // -1: chunked
			return fasthttp.RequestConfig{}
		}
		if refusal := s.refusedCredential(h, x); refusal != "" {
			h.Set(bodyUnauthenticated, refusal)
			h.SetContentLength(0)
		}
		return fasthttp.RequestConfig{}
	}
}

// keyPrefixes are the paths whose routes take an API key (api/routes.go);
// the signed download links under v1 are their own credential.
var keyPrefixes = []string{"/api/v1", "/api/ops/v1", mcpPath}

// refusedCredential says how a request is refused when its headers do not
// carry the valid credential its route wants (refusedKey, or
// refusedByRoute where the route checks something else first), and is ""
// otherwise: for a route that takes none, and when the check itself cannot
// be made (the database is away: the request's own authentication answers
// then).
func (s *keyEdge) refusedCredential(h *fasthttp.RequestHeader, x surfaces) string {
	u := fasthttp.AcquireURI()
	defer fasthttp.ReleaseURI(u)
	if err := u.Parse(nil, h.RequestURI()); err != nil {
		return ""
	}
	// Routes match regardless of case, as fiber matches them.
	path := strings.ToLower(string(u.PathOriginal()))
	under := func(prefix string) bool {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	switch {
	case strings.HasPrefix(path, billing.DownloadPath):
		return ""
	case under(legacyPrefix):
		if x.legacy.refuses(h) {
			return refusedByRoute
		}
		return ""
	case under(mcpPath):
		// The MCP route refuses a foreign Origin (403) and any method but
		// POST (405) before it authenticates.
		if o := string(h.Peek(fasthttp.HeaderOrigin)); (o != "" && !x.mcp.origins.allows(o)) || string(h.Method()) != fasthttp.MethodPost {
			return refusedByRoute
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if under(dashboard.Prefix) {
		// A form post without a session is redirected to sign in.
		if !slices.Contains(dashboard.SessionlessForms, path) && !x.dash.HasSession(ctx, string(h.Cookie(dashboard.SessionCookie))) {
			return refusedByRoute
		}
		return ""
	}
	if !slices.ContainsFunc(keyPrefixes, under) {
		return ""
	}
	key, ok := bearer(string(h.Peek(fasthttp.HeaderAuthorization)))
	if !ok {
		return refusedKey
	}
	if _, err := s.auth.Authenticate(ctx, key, true); err != nil {
		if ae, ok := apperr.As(err); ok && ae.Code == apperr.Unauthorized {
			return refusedKey
		}
	}
	return ""
}

// refuses reports whether a legacy request's headers lack the shared
// secret while v0 is served (disabled or retired, the guard's 404 or 410
// needs no credential and no body either).
func (l *legacyAPI) refuses(h *fasthttp.RequestHeader) bool {
	if !l.enabled || !l.now().Before(l.sunset) {
		return false
	}
	matches := func(v string) bool {
		sum := sha256.Sum256([]byte(v))
		return subtle.ConstantTimeCompare(sum[:], l.secretHash[:]) == 1
	}
	ok := false
	if v := strings.TrimSpace(string(h.Peek("X-API-Key"))); v != "" {
		ok = matches(v) || ok
	}
	if v, has := bearer(string(h.Peek(fasthttp.HeaderAuthorization))); has {
		ok = matches(v) || ok
	}
	return !ok
}

// refusedBody answers a request screenBodies marked, or returns nil to
// let the route's first check answer it. Its body is left unread, so the
// connection cannot carry another request. A key is refused here, so that a
// key created meanwhile does not run a request whose body was dropped; the
// legacy secret is fixed at start and the guard refuses it as it did, as
// the MCP route refuses a foreign origin or a method.
func refusedBody(refusal string) error {
	if refusal == refusedKey {
		return apperr.New(apperr.Unauthorized, "missing, malformed, unknown or revoked API key")
	}
	return nil
}
