package api

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"broll/billing"
	"broll/catalog"
	"broll/catalog/media"
	"broll/catalog/search"
	"broll/embed"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/idempotency"
	"broll/internal/metrics"
	"broll/internal/money"
	"broll/internal/seal"
	"broll/tenancy"
	"broll/webhook"
)

// Deps is everything the HTTP layer needs, built once by NewNode.
type Deps struct {
	Config   config.Config
	Logger   *slog.Logger
	Pool     *pgxpool.Pool
	Redis    *redis.Client
	Tenancy  *tenancy.Service
	Catalog  *catalog.Service
	Search   *search.Service
	Uploads  *media.Uploads
	Billing  *billing.Service
	Webhooks *webhook.Service
	Auth     *tenancy.Authenticator
	Gate     *tenancy.Gate
	Usage    *tenancy.Usage
	Media    media.Store
	// QueryEmbedder embeds semantic_search texts (cached).
	QueryEmbedder *embed.QueryCache
	// Sessions signs dashboard users in.
	Sessions *tenancy.Sessions
	// Sealer seals what must be kept to be used again (idempotent replays).
	Sealer *seal.Sealer
	// Now is the clock; tests set it through NodeOptions.
	Now func() time.Time
	// Metrics is the registry the node's metrics listener serves (not the
	// app: /metrics stays off the public port); the app adds its own
	// metrics and the pool's.
	Metrics *prometheus.Registry
	// Warmup gates /readyz on a warm catalog (nil: no gate).
	Warmup *Warmup
}

// newApp builds the fiber app with every route and middleware.
func newApp(d Deps) *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:               "broll-api",
		BodyLimit:             d.Config.MaxBodyBytes,
		ErrorHandler:          errorHandler(d.Logger, d.Config.BaseURL()),
		DisableStartupMessage: true,
		// ReadTimeout bounds the headers and the bodies read into memory
		// (slowloris); WriteTimeout every answer. The streamed bodies, an
		// upload's PUT and a download, are bounded by BROLL_BODY_IDLE_TIMEOUT
		// between two bytes instead (idleBody, countingReader).
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 5 * time.Minute,
		IdleTimeout:  2 * time.Minute,
		ProxyHeader:  "",
		// No route takes a form: read a multipart body as bytes like any
		// other (and refuse it as JSON) instead of parsing it while
		// reading, which failed mid-upload and dropped the connection.
		DisablePreParseMultipartForm: true,
		// Uploads to the local media store stream to disk; boundBodies
		// reads every other body into memory within BodyLimit.
		StreamRequestBody: true,
	})
	app.Server().HeaderReceived = streamLargeBodies(d.Config.MaxBodyBytes)
	// When Redis loses its revocation markers the auth cache goes with them;
	// a key issued here is never refused from the negative cache.
	d.Gate.OnDataLoss(d.Auth.Drop)
	d.Tenancy.OnKeyCreated(d.Auth.KeyCreated)
	d.Tenancy.LimitPasswordHashing(d.Config.PasswordHashConcurrency)
	d.Billing.SetLowBalanceThreshold(money.Cents(d.Config.LowBalanceThreshold))
	d.Billing.SetTestBalance(money.Cents(d.Config.TestBalance))
	metrics.RegisterPool(d.Metrics, d.Pool)
	m := newAPIMetrics(d.Metrics, d.Gate, newAccessLog(d.Logger, d.Config))
	refuseUnknownMethods(app, d.Config.BaseURL())
	app.Use(withRequestID)
	app.Use(cancelOnDisconnect)
	app.Use(m.observe)
	app.Use(recover.New())
	app.Use(legacyPrefix, markLegacy(legacyHeaders(d.Config, d.Config.BaseURL())))
	app.Use(boundBodies(d.Config.MaxBodyBytes))
	app.Use(decodeBodies(d.Config.MaxBodyBytes))

	s := &server{
		logger: d.Logger, now: d.Now,
		tenancy: d.Tenancy, catalog: d.Catalog, search: d.Search, uploads: d.Uploads, billing: d.Billing, webhooks: d.Webhooks,
		auth: d.Auth, gate: d.Gate, usage: d.Usage, media: d.Media, queryEmbedder: d.QueryEmbedder,
		revoker: tenancy.NewRevoker(d.Tenancy, d.Redis, d.Config.RedisPrefix, d.Auth),
		metrics: m, clientAddr: clientAddr(d.Config.TrustedProxies), importDir: d.Config.ImportDir,
		idem:           idempotency.New(d.Pool, d.Sealer, d.Config.IdempotencyWait, idempotencyStale),
		uploadMaxBytes: d.Config.UploadMaxBytes, uploadTTL: d.Config.UploadURLTTL, bodyIdle: cmp.Or(d.Config.BodyIdleTimeout, 30*time.Second),
		downloads: billing.NewDownloadLimiter(d.Redis, d.Config.RedisPrefix, billing.DownloadLimits{
			PerPurchase: d.Config.DownloadsPerPurchasePerMinute, PerAddress: d.Config.DownloadsPerAddressPerMinute,
		}),
	}
	s.baseURL = d.Config.BaseURL()
	s.routes(app, d)

	// Everything else: 405 with Allow on a known path, 404 problem+json on
	// an unknown one. Fiber's own 405 never fires, since this catch-all
	// matches every request.
	app.Use(newAllowTable(app).unrouted)
	return app
}

// server holds what the handlers call; handlers are its methods.
type server struct {
	logger  *slog.Logger
	now     func() time.Time
	tenancy *tenancy.Service
	catalog *catalog.Service
	search  *search.Service
	uploads *media.Uploads
	billing *billing.Service
	// webhooks manages the account's webhook endpoints.
	webhooks *webhook.Service
	auth     *tenancy.Authenticator
	gate     *tenancy.Gate
	// revoker revokes keys everywhere at once (rows, markers, cache).
	revoker *tenancy.Revoker
	usage   *tenancy.Usage
	media   media.Store
	// uploadMaxBytes and uploadTTL bound POST /api/ops/v1/uploads.
	uploadMaxBytes int64
	uploadTTL      time.Duration
	// bodyIdle bounds the time between two bytes of a streamed body.
	bodyIdle time.Duration
	metrics  *apiMetrics
	// clientAddr is the client's address, through trusted proxies.
	clientAddr func(*fiber.Ctx) string
	// importDir holds the only files the HTTP import may read.
	importDir string
	// downloads limits fetches of signed links.
	downloads *billing.DownloadLimiter
	// idem keeps the answers to requests with an Idempotency-Key.
	idem *idempotency.Store
	// queryEmbedder embeds semantic_search texts.
	queryEmbedder billing.QueryEmbedder
	// baseURL is the public address preview and thumbnail URLs start with.
	baseURL string
	tiers   tierCache
}

type health struct {
	pool   *pgxpool.Pool
	rdb    *redis.Client
	warmup *Warmup
}

func (h *health) live(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// ready answers 200 when the node can serve: Postgres answers. Without
// Redis the node still serves (in-process rate limiter, revocations read
// from Postgres), so it stays in the load balancer, reported "degraded";
// taking every node out because Redis is gone would turn a degraded
// service into no service. A node whose catalog is still cold (warming,
// see Warmup) is not ready.
func (h *health) ready(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	checks := fiber.Map{"postgres": "ok", "redis": "ok"}
	status := "ready"
	if err := h.rdb.Ping(ctx).Err(); err != nil {
		checks["redis"], status = "unreachable", "degraded"
	}
	if err := h.pool.Ping(ctx); err != nil {
		checks["postgres"] = "unreachable"
		return apperr.New(apperr.Unavailable, "not ready").With("checks", checks)
	}
	warm, ok := h.warmup.readiness(ctx)
	checks["warmup"] = warm
	if !ok {
		return apperr.New(apperr.Unavailable, "not ready: warming up").With("checks", checks)
	}
	return c.JSON(fiber.Map{"status": status, "checks": checks})
}
