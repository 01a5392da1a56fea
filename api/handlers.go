package api

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"

	"broll/api/dashboard"
	"broll/billing"
	"broll/billing/license"
	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/catalog/search"
	"broll/collections"
	"broll/internal/admission"
	"broll/internal/idempotency"
	"broll/tenancy"
	"broll/webhook"
	"broll/wiring"
)

// The handlers come in groups, one a struct holding exactly the services
// its handlers use, named; a handler is a method of its group.
// newSurfaces builds them from the root's services for newApp (app.go),
// and routes (routes.go) mounts them. The legacy v0 routes (legacyAPI), MCP (mcpEndpoint,
// mcpTools), the dashboard (dashboard.Deps) and the probes (health) are
// groups too, beside their handlers.

// newSurfaces builds the handler groups over g's services, each given
// those it uses, with the node's metrics m and its warm-up.
func newSurfaces(g *wiring.Services, m *apiMetrics, warmup *Warmup) (x surfaces, err error) {
	cfg := g.Config
	baseURL, addr := cfg.BaseURL(), clientAddr(cfg.TrustedProxies)
	bodyIdle := cmp.Or(cfg.BodyIdleTimeout, 30*time.Second)
	replay := &replayer{idem: g.Idempotency, logger: g.Logger}
	clips := &clipsAPI{catalog: g.Catalog, search: g.Search, billing: g.Billing, queryEmbedder: g.QueryEmbedder,
		now: g.Now, baseURL: baseURL, fragments: newClipFragments()}
	purchases := &purchasesAPI{billing: g.Billing, collections: g.Collections, tenancy: g.Tenancy, licenses: g.Licenses,
		queryEmbedder: g.QueryEmbedder, metrics: m, now: g.Now, replay: replay}
	colls := &collectionsAPI{collections: g.Collections, clips: clips}
	tools := &mcpTools{clips: clips, purchases: purchases, colls: colls, catalog: g.Catalog, billing: g.Billing, collections: g.Collections,
		licenses: g.Licenses, queryEmbedder: g.QueryEmbedder, logger: g.Logger, metrics: m, tracer: g.Telemetry.Tracer("broll/api/mcp")}
	x = surfaces{
		edge:        &keyEdge{auth: g.Auth, gate: g.Gate, metrics: m},
		keys:        &keysAPI{tenancy: g.Tenancy, keyChanges: g.KeyChanges, usage: g.Usage, replay: replay},
		webhooks:    &webhooksAPI{webhooks: g.Webhooks},
		clips:       clips,
		purchases:   purchases,
		collections: colls,
		ops:         &opsAPI{catalog: g.Catalog, imports: g.Imports, importDir: cfg.ImportDir, logger: g.Logger},
		uploads: &uploadsAPI{uploads: g.Uploads, media: g.Media, uploadMaxBytes: cfg.UploadMaxBytes, uploadTTL: cfg.UploadURLTTL,
			bodyIdle: bodyIdle, baseURL: baseURL},
		downloads: &downloadsAPI{billing: g.Billing, downloads: g.Downloads, media: g.Media, clientAddr: addr,
			bodyIdle: bodyIdle, logger: g.Logger},
		licensePages: &licensePages{licenses: g.Licenses, licenseLookups: g.LicenseLookups, clientAddr: addr, baseURL: baseURL},
		mcp:          newMCPEndpoint(tools, baseURL, cfg.MCPAllowedOrigins),
		legacy: newLegacyAPI(&legacyAPI{clips: clips, tenancy: g.Tenancy, billing: g.Billing, metrics: m, now: g.Now},
			cfg, baseURL),
		health: &health{pool: g.Pool, rdb: g.Redis, warmup: warmup},
	}
	if x.explorer, x.asset, err = docsSite(); err != nil {
		return surfaces{}, err
	}
	// The dashboard's pages are embedded templates: an error here is a
	// broken build, not a runtime condition.
	if x.dash, err = dashboard.New(dashboard.Deps{
		Config: cfg, Logger: g.Logger, Tenancy: g.Tenancy, Billing: g.Billing, Collections: g.Collections, Licenses: g.Licenses,
		Webhooks: g.Webhooks, Usage: g.Usage,
		KeyChanges: g.KeyChanges, Sessions: g.Sessions, RequestID: requestID, Now: g.Now,
		ClientAddr: addr,
	}); err != nil {
		return surfaces{}, fmt.Errorf("api: %w", err)
	}
	return x, nil
}

// keyEdge admits the requests of the keyed surfaces (v1, ops, MCP): the
// key, its revocation markers, its rate limit and usage (authenticate),
// and, before a body is read, whether its credential could pass
// (screenBodies).
type keyEdge struct {
	auth    *tenancy.Authenticator
	gate    *admission.Gate
	metrics *apiMetrics
}

// replayer answers a request sent again with its Idempotency-Key as the
// first was answered (idempotent).
type replayer struct {
	idem   *idempotency.Store
	logger *slog.Logger
}

// keysAPI is /api/v1/keys: a root key's customer keys.
type keysAPI struct {
	tenancy *tenancy.Service
	// keyChanges changes and revokes keys everywhere at once (rows,
	// markers, cache).
	keyChanges *tenancy.KeyChanges
	// usage adds the counts not yet flushed to a listing.
	usage  *tenancy.Usage
	replay *replayer
}

// webhooksAPI is /api/v1/webhooks: a root key's webhook endpoints.
type webhooksAPI struct {
	webhooks *webhook.Service
}

// clipsAPI reads the catalog for a key: /api/v1/broll and its filters,
// /api/v1/pricing, the public previews and thumbnails, and the same reads
// for MCP's tools and the legacy listing and details.
type clipsAPI struct {
	catalog *catalog.Service
	search  *search.Service
	// billing says which clips the key owns, with their download links.
	billing *billing.Service
	// queryEmbedder embeds semantic_search texts.
	queryEmbedder billing.QueryEmbedder
	now           func() time.Time
	// baseURL is the public address preview and thumbnail URLs start with.
	baseURL string
	tiers   tierCache
	// fragments are the clips' Video objects as JSON, by row version.
	fragments *clipFragments
}

// purchasesAPI is what a key buys and holds: /api/v1/broll/purchase,
// /api/v1/broll/purchases, /api/v1/balance and /api/v1/licenses, and MCP's
// purchase and balance tools (buy, balanceView).
type purchasesAPI struct {
	billing *billing.Service
	// collections buys a collection whole (through billing).
	collections *collections.Service
	// tenancy reads a customer key's spend limit for its balance.
	tenancy *tenancy.Service
	// licenses signs the purchases' licences.
	licenses *license.Service
	// queryEmbedder embeds the listing's semantic_search texts.
	queryEmbedder billing.QueryEmbedder
	metrics       *apiMetrics
	now           func() time.Time
	replay        *replayer
}

// opsAPI is /api/ops/v1/videos: ops keys' import, retirement and state of
// clips.
type opsAPI struct {
	catalog *catalog.Service
	imports *imports.Service
	// importDir holds the only files the HTTP import may read.
	importDir string
	logger    *slog.Logger
}

// uploadsAPI is /api/ops/v1/uploads: the files ops keys upload for an
// import.
type uploadsAPI struct {
	uploads *media.Uploads
	media   media.Store
	// uploadMaxBytes and uploadTTL bound POST /api/ops/v1/uploads.
	uploadMaxBytes int64
	uploadTTL      time.Duration
	// bodyIdle bounds the time between two bytes of a streamed body.
	bodyIdle time.Duration
	baseURL  string
}

// downloadsAPI serves a purchase's file behind its signed link.
type downloadsAPI struct {
	billing *billing.Service
	// downloads limits fetches of signed links.
	downloads *billing.DownloadLimiter
	media     media.Store
	// clientAddr is the client's address, through trusted proxies.
	clientAddr func(*fiber.Ctx) string
	bodyIdle   time.Duration
	logger     *slog.Logger
}

// licensePages are the licences' public pages, which need no key: the
// signing keys, the terms and the verify page.
type licensePages struct {
	licenses *license.Service
	// licenseLookups limits the verify page per address.
	licenseLookups *license.LookupLimiter
	clientAddr     func(*fiber.Ctx) string
	baseURL        string
}

// mcpTools are MCP's tools: the REST reads and purchases of clipsAPI and
// purchasesAPI, with what a tool reads beside them.
type mcpTools struct {
	clips     *clipsAPI
	purchases *purchasesAPI
	catalog   *catalog.Service
	billing   *billing.Service
	// collections keeps the assistants' shortlists (the collection tools).
	collections *collections.Service
	// colls renders a collection with its items as the REST read does.
	colls    *collectionsAPI
	licenses *license.Service
	// queryEmbedder embeds the purchase listing's semantic_search texts.
	queryEmbedder billing.QueryEmbedder
	logger        *slog.Logger
	metrics       *apiMetrics
	// tracer starts each tool call's span (mcp_trace.go).
	tracer trace.Tracer
}
