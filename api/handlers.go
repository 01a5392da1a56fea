package api

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/billing/license"
	"broll/catalog"
	"broll/catalog/media"
	"broll/catalog/search"
	"broll/internal/idempotency"
	"broll/tenancy"
	"broll/webhook"
)

// The handlers come in groups, one a struct holding exactly the services
// its handlers use, named; a handler is a method of its group. newApp
// (app.go) builds them from the root's services, and routes (routes.go)
// mounts them. The legacy v0 routes (legacyAPI), MCP (mcpEndpoint,
// mcpTools), the dashboard (dashboard.Deps) and the probes (health) are
// groups too, beside their handlers.

// keyEdge admits the requests of the keyed surfaces (v1, ops, MCP): the
// key, its revocation markers, its rate limit and usage (authenticate),
// and, before a body is read, whether its credential could pass
// (screenBodies).
type keyEdge struct {
	auth    *tenancy.Authenticator
	gate    *tenancy.Gate
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
	// auth and gate forget a changed key's cached settings on every node.
	auth *tenancy.Authenticator
	gate *tenancy.Gate
	// revoker revokes keys everywhere at once (rows, markers, cache).
	revoker *tenancy.Revoker
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
}

// purchasesAPI is what a key buys and holds: /api/v1/broll/purchase,
// /api/v1/broll/purchases, /api/v1/balance and /api/v1/licenses, and MCP's
// purchase and balance tools (buy, balanceView).
type purchasesAPI struct {
	billing *billing.Service
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
	licenses  *license.Service
	// queryEmbedder embeds the purchase listing's semantic_search texts.
	queryEmbedder billing.QueryEmbedder
	logger        *slog.Logger
	metrics       *apiMetrics
}
