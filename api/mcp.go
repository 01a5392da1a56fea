package api

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/tenancy"
)

// mcpPath is the MCP endpoint (docs/mcp.md).
const mcpPath = "/api/mcp"

// mcpInstructions is what an assistant reads before using the tools: the
// licensing rules, then the quote-then-buy flow.
const mcpInstructions = `B-roll clip library: search and preview clips for free, buy full-quality downloads paid from the account's prepaid USD balance.

Licensing: every purchase is a single-user license, so a downloaded file may go only to the end user it was bought for and must never be redistributed, resold, sublicensed or shared, and a platform serving several end users must use a separate API key per end customer instead of reusing one purchase for many. A violation costs 50,000 USD per incident plus immediate revocation of API access and possible legal action, and the operator may audit usage logs for redistribution patterns.

To buy: find clips with search_videos (semantic_search for descriptions, filters for emotion, gender, orientation...) or get_video (find_similar_videos for more like a clip the user likes); call purchase_videos with dry_run=true to get a quote; tell the user the total and the remaining balance and get their go-ahead; then call purchase_videos again with the same video_ids and expected_total set to the quoted total_charged, so that nothing is charged if a price changed in between (price_changed: quote again). Clips this key already owns are never charged twice; buying one again, get_video or list_purchases return a fresh download link. Download links expire (download_url_expires_at); do not store them, ask again.

To keep a shortlist across turns and conversations (you remember nothing between calls, the server neither): create_collection once, add_to_collection as the user picks clips, get_collection to show it again, list_collections to find it later; buy it whole with purchase_videos and collection_id (quote with dry_run=true first, as above).`

// mcpEndpoint serves Streamable HTTP in stateless mode: every POST is a
// complete exchange, so any API node can answer any request and a session id,
// if a client sends one, is ignored and grants nothing.
type mcpEndpoint struct {
	tools   *mcpTools
	origins originPolicy
	sdk     http.Handler
}

// newMCPEndpoint builds the endpoint over tools, allowing the origin of
// baseURL and allowedOrigins; api/routes.go says in which order its route
// checks a request.
func newMCPEndpoint(tools *mcpTools, baseURL string, allowedOrigins []string) *mcpEndpoint {
	ep := &mcpEndpoint{tools: tools, origins: newOriginPolicy(baseURL, allowedOrigins)}
	sdkLog := slog.New(warnAndAbove{tools.logger.With("component", "mcp").Handler()})
	srv := tools.newMCPServer(sdkLog)
	ep.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: sdkLog})
	return ep
}

// cors answers preflights and sets the CORS headers for allowed origins.
func (ep *mcpEndpoint) cors() fiber.Handler {
	return cors.New(cors.Config{
		AllowOriginsFunc: ep.origins.allows,
		AllowMethods:     fiber.MethodPost,
		AllowHeaders:     "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID",
		ExposeHeaders:    "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, WWW-Authenticate",
		MaxAge:           600,
	})
}

func (s *mcpTools) newMCPServer(logger *slog.Logger) *mcp.Server {
	// The tool list never changes at run time: saying so keeps clients from
	// holding a listen request open for change notifications.
	srv := mcp.NewServer(&mcp.Implementation{Name: "broll", Title: "B-roll licensing", Version: "1.0.0"},
		&mcp.ServerOptions{Instructions: mcpInstructions, Logger: logger,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: false}}})
	tools := &toolSet{mcp: srv, scopes: map[string]tenancy.Scope{}}
	s.addMCPTools(tools)
	srv.AddReceivingMiddleware(tools.listPermitted)
	return srv
}

// postOnly answers GET and DELETE as the transport spec has a stateless
// server do: there is no server-to-client SSE stream to open and no session
// to end, so 405 with Allow: POST (clients treat it as "no stream"). It runs
// before authentication because the answer is the same for everyone and a
// client's probe after initialize should not spend its rate limit.
func postOnly(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodPost {
		return c.Next()
	}
	c.Set(fiber.HeaderAllow, fiber.MethodPost)
	return apperr.New(apperr.MethodNotAllowed, "the MCP endpoint is stateless: send JSON-RPC messages with POST; "+
		"there is no SSE stream to open with GET and no session to end with DELETE")
}

// checkOrigin refuses browser requests from origins not on the allow-list:
// a page on another site (or one that rebinds its DNS name to this host)
// must not be able to drive the tools. Requests without Origin come from
// non-browser clients, which the bearer key alone authenticates.
func (ep *mcpEndpoint) checkOrigin(c *fiber.Ctx) error {
	if o := c.Get(fiber.HeaderOrigin); o != "" && !ep.origins.allows(o) {
		return apperr.New(apperr.Forbidden, "origin %q may not call the MCP endpoint; set BROLL_MCP_ALLOWED_ORIGINS to allow it", apperr.Clip(o))
	}
	return c.Next()
}

type fiberCtxKey struct{}

// mcpExchangeLimit bounds one POST. Tool calls finish long before it; it
// exists for requests the SDK would otherwise park until the client goes
// away (subscriptions/listen), which a buffered fasthttp response cannot
// notice.
const mcpExchangeLimit = 2 * time.Minute

// serve hands the request to the SDK's net/http handler. The adaptor runs
// that handler synchronously, and the SDK's stateless handler does not
// return before its per-request session is closed, which waits for every
// in-flight tool call. So the fiber context, with the principal
// authenticate put in its locals, outlives every tool call; tool handlers
// read it from their context (requestFrom) and see the caller exactly as
// REST handlers do. The base context is c.UserContext(), as REST uses, not
// the pooled fasthttp context.
func (ep *mcpEndpoint) serve(c *fiber.Ctx) error {
	// A batch would put several tool calls behind one rate-limit token and
	// one fiber context; MCP dropped batching in 2025-06-18 anyway.
	if b := bytes.TrimLeft(c.Request().Body(), " \t\r\n"); len(b) > 0 && b[0] == '[' {
		return apperr.New(apperr.Invalid, "JSON-RPC batches are not supported: send one message per request")
	}
	// The SDK reads the envelope (names case-sensitively, the last of
	// duplicates), the tools their arguments (decodeArgs): a message that
	// names a member twice could mean one thing to one and another to the
	// other, so it is refused before either reads it.
	if err := uniqueNames(c.Request().Body()); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), mcpExchangeLimit)
	defer cancel()
	ctx = context.WithValue(ctx, fiberCtxKey{}, c)
	h := adaptor.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ep.sdk.ServeHTTP(w, r.WithContext(ctx))
	}))
	if err := h(c); err != nil {
		return err
	}
	return ep.problemFromSDK(c)
}

// requestFrom returns the fiber context of the HTTP request a tool call came
// in on; false only if the tool is invoked outside serve.
func requestFrom(ctx context.Context) (*fiber.Ctx, bool) {
	c, ok := ctx.Value(fiberCtxKey{}).(*fiber.Ctx)
	return c, ok && c != nil
}

// problemFromSDK turns the SDK's plain-text transport refusals (wrong
// Content-Type or Accept, unparseable JSON, unsupported protocol version)
// into problem+json like every other error of the API. JSON-RPC error
// bodies are left alone: MCP clients parse those.
func (ep *mcpEndpoint) problemFromSDK(c *fiber.Ctx) error {
	status := c.Response().StatusCode()
	if status < 400 || !strings.HasPrefix(string(c.Response().Header.ContentType()), fiber.MIMETextPlain) {
		return nil
	}
	msg := strings.TrimSpace(string(c.Response().Body()))
	c.Response().ResetBody()
	ae := classify.FromFiber(fiber.NewError(status, msg))
	if classify.Status(ae.Code) >= 500 {
		ep.tools.logger.Error("mcp transport failed", "request_id", requestID(c), "status", status, "error", msg)
		return ae
	}
	// The SDK's reason is more precise than the generic one and safe to show:
	// it only ever describes the client's own request.
	return apperr.New(ae.Code, "%s", msg)
}

// originPolicy is the Origin allow-list of the MCP endpoint: the service's
// own public origin plus BROLL_MCP_ALLOWED_ORIGINS ("*" allows any).
type originPolicy struct {
	anyOrigin bool
	allowed   []string
}

func newOriginPolicy(baseURL string, configured []string) originPolicy {
	p := originPolicy{anyOrigin: slices.Contains(configured, "*")}
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		p.allowed = append(p.allowed, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	for _, o := range configured {
		p.allowed = append(p.allowed, strings.ToLower(o))
	}
	return p
}

// allows compares the way browsers serialize an origin: lower-case scheme
// and host, no path, no trailing slash.
func (p originPolicy) allows(origin string) bool {
	return p.anyOrigin || slices.Contains(p.allowed, strings.ToLower(strings.TrimSpace(origin)))
}

// warnAndAbove passes on the SDK's warnings and errors only. Its Info lines
// ("server session connected", "... disconnected") describe the throwaway
// session of every stateless request: three log lines per tool call.
type warnAndAbove struct{ slog.Handler }

func (h warnAndAbove) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnAndAbove) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnAndAbove{h.Handler.WithAttrs(attrs)}
}

func (h warnAndAbove) WithGroup(name string) slog.Handler {
	return warnAndAbove{h.Handler.WithGroup(name)}
}
