// Package wiring is the composition root: the one place where the services
// of every process are built. cmd/broll-api, cmd/broll-worker,
// cmd/brollctl, the test setups and the benchmarks open their Services here, each
// with the parts it needs, and hand it to the adapters (api.NewNode; the
// worker.Deps of worker.New), so tests run what production wires.
//
// It imports the domain packages and internal/, never an adapter: api
// imports it, and the tests of api and worker can too.
package wiring

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"broll/billing"
	"broll/billing/license"
	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/catalog/mediajobs"
	"broll/catalog/search"
	"broll/collections"
	"broll/embed"
	"broll/internal/admission"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/displayname"
	"broll/internal/idempotency"
	"broll/internal/logging"
	"broll/internal/metrics"
	"broll/internal/redisx"
	"broll/internal/replica"
	"broll/internal/seal"
	"broll/internal/tasks"
	"broll/internal/telemetry"
	"broll/tenancy"
	"broll/webhook"
)

// Parts are the parts of the services that cost a connection, a check or a
// secret at start; a process asks for those it uses. The services that need
// only the database (tenancy, the authenticator, billing, the catalog) are
// in every set.
type Parts uint

const (
	// Redis is REDIS_URL's client and what works over it: the job queue,
	// the rate-limit gate, usage counters, dashboard sessions, revocation
	// and the download limiter.
	Redis Parts = 1 << iota
	// Media is the media store BROLL_MEDIA_STORE names (an S3 bucket is
	// checked at start).
	Media
	// Embedder is the embedder BROLL_EMBED_PROVIDER selects (Ollama is
	// checked at start) and the query-embedding cache over it.
	Embedder
	// Secrets is what needs BROLL_SIGNING_KEY: the sealer, signed download
	// links, webhook endpoints and the idempotency store.
	Secrets
	// Replica sends the catalog's reads to BROLL_DATABASE_READ_URL while
	// it keeps up.
	Replica
	// Delivery is the webhook deliverer (it implies Secrets).
	Delivery
	// Fonts are the licence certificate's fonts (BROLL_CERTIFICATE_FONT_DIR,
	// read at start): the certificates are printed with them, and the
	// names a certificate shows are refused when set if a character has
	// no glyph in them. Without it names are checked as text only.
	Fonts
)

// The parts of each process.
const (
	// APIParts are an API node's: everything but the deliverer.
	APIParts = Redis | Media | Embedder | Secrets | Replica | Fonts
	// WorkerParts are a worker's: it embeds, probes media, counts usage
	// and delivers webhooks; it serves no catalog reads to customers.
	WorkerParts = Redis | Media | Embedder | Secrets | Delivery
	// CLIParts are brollctl's: no embedder (a command that needs the model
	// name selects one itself, SelectEmbedder) and no secrets, so that
	// operators run it without BROLL_SIGNING_KEY; a command that sets a
	// name a licence shows adds Fonts.
	CLIParts = Redis | Media
)

// Options are what a caller may put in place of what Open would open.
type Options struct {
	// Parts are the parts to build beside the database's services.
	Parts Parts
	// Pool and Redis are connections the caller opened and closes (test
	// graphs share one database); nil opens DATABASE_URL (with
	// BROLL_STATEMENT_TIMEOUT) and, with the Redis part, REDIS_URL, which
	// Close closes.
	Pool  *pgxpool.Pool
	Redis *redis.Client
	// Logs receives the log lines at BROLL_LOG_LEVEL; nil drops them.
	Logs io.Writer
	// Now is the clock of sessions, sunsets and expiries; nil is time.Now.
	Now func() time.Time
	// Embedder is used, with the Embedder part, in place of the one
	// BROLL_EMBED_PROVIDER selects.
	Embedder embed.Embedder
	// Fonts are used, with the Fonts part, in place of loading them (they
	// are only read, so graphs may share them).
	Fonts *license.Fonts
	// Telemetry traces the services; nil builds it from the OTEL_*
	// variables (off without an OTLP endpoint), flushed by Close.
	Telemetry *telemetry.Provider
	// Service names the process in its traces when OTEL_SERVICE_NAME
	// does not ("broll-api", "broll-worker").
	Service string
}

// Services are one process's services over its stores. Open builds it
// complete; its fields are read, never set, afterwards. A field of a part
// that was not asked for is nil.
type Services struct {
	Config config.Config
	Logger *slog.Logger
	Now    func() time.Time
	// Metrics is the registry the process serves at /metrics (the pool's
	// statistics registered); each adapter adds its own.
	Metrics *prometheus.Registry
	// Telemetry is the process's tracer provider (no-op when tracing is
	// off): the pool's statements and the Redis client's commands are
	// traced when Open opened them.
	Telemetry *telemetry.Provider
	parts     Parts

	Pool *pgxpool.Pool
	// Reads picks the pool of the catalog's reads (Replica).
	Reads *replica.Reads
	Redis *redis.Client
	// QueueConn is asynq's connection for REDIS_URL, with which a worker's
	// task server opens connections of its own (Redis).
	QueueConn asynq.RedisConnOpt
	// Queue puts jobs on the asynq queues; Inspector reads them (Redis).
	Queue     *tasks.AsynqQueue
	Inspector *asynq.Inspector
	Media     media.Store
	// Uploads are the files ops keys upload for an import (Media).
	Uploads  *media.Uploads
	Embedder embed.Embedder
	// Fonts print licence certificates (Fonts).
	Fonts *license.Fonts
	// QueryEmbedder embeds search texts through a cache in Redis
	// (Embedder; without Redis, uncached).
	QueryEmbedder *embed.QueryCache
	Sealer        *seal.Sealer

	Tenancy *tenancy.Service
	Auth    *tenancy.Authenticator
	// Gate admits requests (rate limit, revocation markers) and counts
	// them in Usage; whoever serves requests runs Usage.Run to flush. The
	// catalog and billing hold it across their changes (admission.Door).
	Gate       *admission.Gate
	Usage      *tenancy.Usage
	Sessions   *tenancy.Sessions
	KeyChanges *tenancy.KeyChanges
	Billing    *billing.Service
	Downloads  *billing.DownloadLimiter
	// Collections is the keys' shortlists of clips, bought through Billing.
	Collections *collections.Service
	// Licenses reads, signs and revokes the purchases' licences; nil when
	// no signing secret is configured (brollctl without BROLL_SIGNING_KEY).
	Licenses *license.Service
	// LicenseLookups bounds the public verify page per address (Redis).
	LicenseLookups *license.LookupLimiter
	// Stamps makes (Media), asks for (Redis) and prunes the licence-stamped
	// copies of purchased files.
	Stamps  *license.Stamper
	Catalog *catalog.Service
	// Imports validates clips and writes them into the catalog.
	Imports *imports.Service
	// MediaJobs probes the catalog's clip files and makes their previews.
	MediaJobs *mediajobs.Service
	// Search runs the catalog's searches; it keeps this process's recent
	// search totals.
	Search    *search.Service
	Webhooks  *webhook.Service
	Deliverer *webhook.Deliverer
	// Idempotency keeps the answers to requests with an Idempotency-Key.
	Idempotency *idempotency.Store

	// allow is BROLL_WEBHOOK_ALLOW_HOSTS, read with Secrets.
	allow webhook.Allow
	// licenseKeys sign licences (nil without a signing secret).
	licenseKeys *license.Keyring
	closers     []func()
}

// idempotencyStale is how long a claimed Idempotency-Key may stay without
// an answer before a retry takes it over: far longer than any request
// runs (a purchase gives up after 30 s), so only a node that died holds it.
const idempotencyStale = 2 * time.Minute

// telemetryFlush bounds the export of the spans still buffered at Close.
const telemetryFlush = 5 * time.Second

// Open builds the services cfg and o describe, opening what o does not supply.
// On error nothing it opened stays open.
func Open(ctx context.Context, cfg config.Config, o Options) (_ *Services, err error) {
	if o.Parts&Delivery != 0 {
		o.Parts |= Secrets
	}
	if o.Logs == nil {
		o.Logs = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &Services{Config: cfg, Logger: logging.New(o.Logs, cfg.LogLevel), Now: o.Now, parts: o.Parts,
		Pool: o.Pool, Metrics: metrics.NewRegistry(), Telemetry: o.Telemetry}
	if g.Has(Redis) {
		g.Redis = o.Redis
	}
	if g.Has(Embedder) {
		g.Embedder = o.Embedder
	}
	if g.Has(Fonts) {
		g.Fonts = o.Fonts
	}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if err := g.open(ctx, o.Service); err != nil {
		return nil, err
	}
	g.build()
	return g, nil
}

// open opens the connections and checks the parts that need one.
func (g *Services) open(ctx context.Context, service string) (err error) {
	cfg := g.Config
	if g.Telemetry == nil {
		if g.Telemetry, err = NewTelemetry(ctx, telemetry.ProviderOptions{ServiceName: service}); err != nil {
			return err
		}
		tp := g.Telemetry
		g.closers = append(g.closers, func() {
			// Close has no context: the spans still buffered get a few
			// seconds to leave.
			flush, cancel := context.WithTimeout(context.Background(), telemetryFlush)
			defer cancel()
			if err := tp.Shutdown(flush); err != nil {
				g.Logger.Warn("traces not flushed", "error", err.Error())
			}
		})
	}
	if g.Pool == nil {
		if g.Pool, err = database.Open(ctx, cfg.DatabaseURL, database.StatementTimeout(cfg.StatementTimeout),
			database.Tracer(g.Telemetry.PoolTracer())); err != nil {
			return err
		}
		g.closers = append(g.closers, g.Pool.Close)
	}
	if g.Has(Replica) {
		// Catalog reads go to the replica while it keeps up (none when unset).
		g.Reads = replica.New(g.Pool, cfg.DatabaseReadURL, replica.ReadsOptions{Logger: g.Logger})
		g.closers = append(g.closers, g.Reads.Close)
	}
	if g.Has(Redis) {
		if g.Redis == nil {
			if g.Redis, err = redisx.Open(ctx, cfg.RedisURL); err != nil {
				return err
			}
			rdb := g.Redis
			g.closers = append(g.closers, func() { _ = rdb.Close() })
			if err := g.Telemetry.InstrumentRedis(rdb); err != nil {
				return fmt.Errorf("trace redis: %w", err)
			}
		}
		if cfg.RedisURL != "" {
			if g.QueueConn, err = tasks.RedisConnOpt(cfg.RedisURL); err != nil {
				return err
			}
		}
	}
	if g.Has(Media) {
		if g.Media, err = OpenMedia(ctx, cfg); err != nil {
			return err
		}
	}
	if g.Has(Embedder) && g.Embedder == nil {
		if g.Embedder, err = selectEmbedder(ctx, cfg, g.Logger, g.Telemetry); err != nil {
			return err
		}
	}
	if g.Has(Fonts) && g.Fonts == nil {
		if g.Fonts, err = license.LoadFonts(cfg.License.FontDir); err != nil {
			return err
		}
	}
	if current, previous := cfg.License.Secrets(cfg); current != "" {
		if g.licenseKeys, err = license.NewKeyring(current, previous...); err != nil {
			return err
		}
	}
	if g.Has(Secrets) {
		if g.allow, err = webhook.ParseAllow(cfg.WebhookAllowHosts); err != nil {
			return fmt.Errorf("BROLL_WEBHOOK_ALLOW_HOSTS: %w", err)
		}
		// Webhook signing secrets and idempotent replays are sealed under
		// BROLL_SIGNING_KEY.
		if g.Sealer, err = NewSealer(cfg); err != nil {
			return err
		}
	}
	return nil
}

// build wires the services over what open opened. Nothing here does I/O
// or fails.
func (g *Services) build() {
	cfg, pool, rdb := g.Config, g.Pool, g.Redis
	metrics.RegisterPool(g.Metrics, pool)
	deps := map[string]func(context.Context) error{"postgres": pool.Ping}
	if rdb != nil {
		deps["redis"] = func(ctx context.Context) error { return rdb.Ping(ctx).Err() }
		metrics.RegisterRedisPool(g.Metrics, rdb)
	}
	metrics.Dependencies(g.Metrics, deps)
	g.Auth = tenancy.NewAuthenticator(pool, tenancy.AuthenticatorOptions{CacheTTL: cfg.AuthCacheTTL})
	// A key issued here is never refused from the negative cache.
	// The names a licence shows are refused when set if its certificate
	// could not print them.
	var names displayname.Rule
	if g.Fonts != nil {
		names.Printer = g.Fonts
	}
	g.Tenancy = tenancy.New(pool, tenancy.ServiceOptions{PasswordHashing: cfg.PasswordHashConcurrency, OnKeyCreated: g.Auth.KeyCreated,
		Names: names})
	var links *billing.Signer
	if g.Has(Secrets) {
		links = billing.NewSigner(cfg.SigningKey.Reveal(), cfg.SigningKeyPrevious.Reveal(),
			billing.SignerOptions{BaseURL: cfg.BaseURL(), TTL: cfg.DownloadURLTTL})
	}
	stampOpts := license.StamperOptions{Media: g.Media, BaseURL: cfg.BaseURL(), Logger: g.Logger.With("component", "licence-stamps")}
	var door admission.Door // nil without Redis: no node trusts a copy without asking Postgres
	if g.Has(Redis) {
		g.Usage = tenancy.NewUsage(pool, rdb, cfg.RedisPrefix)
		// When Redis loses its revocation markers the auth cache goes with them.
		g.Gate = admission.NewGate(rdb, cfg.RedisPrefix, g.Usage,
			admission.GateOptions{PerMinute: cfg.RateLimitPerMinute, Logger: g.Logger, OnDataLoss: g.Auth.Drop})
		door = g.Gate
		// Before the Redis client closes (closers run in reverse).
		g.closers = append(g.closers, g.Gate.Close)
		g.Inspector = asynq.NewInspectorFromRedisClient(rdb)
		g.Queue = tasks.NewAsynqQueue(asynq.NewClientFromRedisClient(rdb), g.Inspector,
			tasks.AsynqQueueOptions{Prefix: cfg.RedisPrefix, BatchSize: cfg.WorkerBatchSize})
		stampOpts.Queue = g.Queue
	}
	g.Stamps = license.NewStamper(pool, stampOpts)
	g.Billing = billing.New(pool, billing.ServiceOptions{Links: links, Keys: g.Tenancy, Names: names,
		LowBalanceThreshold: cfg.LowBalanceThreshold, TestBalance: cfg.TestBalance, Admission: door, Stamps: g.Stamps,
		Telemetry: g.Telemetry})
	if g.licenseKeys != nil {
		g.Licenses = license.New(pool, license.ServiceOptions{Keys: g.licenseKeys, Licensor: cfg.License.LicensorName,
			TermsVersion: cfg.License.TermsVersion, TermsURL: cfg.TermsLink(), BaseURL: cfg.BaseURL(), Fonts: g.Fonts, Stamps: g.Stamps})
	}

	var queue catalog.EmbedQueue // a nil *AsynqQueue would be a queue that is not nil
	if g.Has(Redis) {
		g.Sessions = tenancy.NewSessions(rdb, cfg.RedisPrefix, g.Tenancy, tenancy.SessionsOptions{
			IdleTimeout: cfg.SessionTTL, MaxAge: cfg.SessionMaxAge,
			MaxFailures: cfg.SignInMaxFailures, Lockout: cfg.SignInLockout, Now: g.Now,
			GlobalAttempts: redis_rate.PerMinute(cfg.SignInGlobalPerMinute),
		})
		g.KeyChanges = tenancy.NewKeyChanges(g.Tenancy, rdb, cfg.RedisPrefix, g.Auth)
		g.Downloads = billing.NewDownloadLimiter(rdb, cfg.RedisPrefix, billing.DownloadLimiterOptions{
			PerPurchase: cfg.DownloadsPerPurchasePerMinute, PerAddress: cfg.DownloadsPerAddressPerMinute,
		})
		g.LicenseLookups = license.NewLookupLimiter(rdb, cfg.RedisPrefix,
			license.LookupLimiterOptions{PerMinute: cfg.License.LookupsPerAddressPerMinute})
		queue = g.Queue
	}
	if g.Media != nil {
		g.Uploads = media.NewUploads(pool, g.Media)
	}
	g.Catalog = catalog.NewService(catalog.ServiceOptions{Pool: pool, Reads: g.Reads, Media: g.Media, Queue: queue, Admission: door, Uploads: g.Uploads,
		Telemetry: g.Telemetry})
	g.MediaJobs = mediajobs.New(g.Catalog)
	g.Imports = imports.New(g.Catalog)
	quiet := cfg.ListingsQuiet
	if quiet == 0 {
		quiet = -1 // BROLL_LISTINGS_QUIET=0: no listings
	}
	g.Search = search.NewService(g.Catalog, search.ServiceOptions{EfSearch: cfg.SemanticEfSearch,
		Calibrated: cfg.SemanticRecallTarget > 0, ListingsQuiet: quiet})
	g.Collections = collections.New(pool, g.Billing, collections.ServiceOptions{Retention: cfg.CollectionRetention,
		Videos: g.Catalog})
	if g.Embedder != nil {
		g.QueryEmbedder = NewQueryCache(cfg, g.Embedder, rdb)
	}
	if g.Has(Secrets) {
		g.Webhooks = webhook.New(pool, g.Sealer, webhook.ServiceOptions{Allow: g.allow})
		g.Idempotency = idempotency.New(pool, g.Sealer, idempotency.StoreOptions{Wait: cfg.IdempotencyWait, Stale: idempotencyStale})
		if g.Has(Delivery) {
			g.Deliverer = webhook.NewDeliverer(pool, g.Sealer, webhook.DelivererOptions{
				Allow: g.allow, Logger: g.Logger.With("component", "webhooks"),
				PollInterval: cfg.WebhookPollInterval, RetryBase: cfg.WebhookRetryBase, RetryMax: cfg.WebhookRetryMax,
				Observe: metrics.WebhookDeliveries(g.Metrics), Telemetry: g.Telemetry,
			})
			metrics.WebhookLag(g.Metrics, g.Deliverer.Lag)
		}
	}
}

// Has reports whether the services were built with all of parts.
func (g *Services) Has(parts Parts) bool { return g.parts&parts == parts }

// Require is an adapter's check that the services it is given have the parts
// it uses.
func (g *Services) Require(who string, parts Parts) error {
	if g == nil {
		return fmt.Errorf("%s: no services", who)
	}
	if missing := parts &^ g.parts; missing != 0 {
		return fmt.Errorf("%s: the services lack %s (open them with the parts this process needs)", who, missing)
	}
	return nil
}

// Close releases what Open opened, in reverse order; the connections a
// caller supplied stay open.
func (g *Services) Close() {
	for i := len(g.closers) - 1; i >= 0; i-- {
		g.closers[i]()
	}
	g.closers = nil
}

// NewQueryCache is the query-embedding cache of e's model in rdb, where
// every process of the deployment finds it (the API's searches fill it,
// brollctl's calibration reads it).
func NewQueryCache(cfg config.Config, e embed.Embedder, rdb *redis.Client) *embed.QueryCache {
	return embed.NewCachedQueryEmbedder(e, rdb, cfg.RedisPrefix+"qemb:", embed.QueryCacheOptions{TTL: embed.DefaultQueryCacheTTL})
}
