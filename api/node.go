package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"broll/billing"
	"broll/catalog"
	"broll/catalog/media"
	"broll/catalog/search"
	"broll/embed"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/logging"
	"broll/internal/metrics"
	"broll/internal/redisx"
	"broll/internal/replica"
	"broll/internal/seal"
	"broll/internal/tasks"
	"broll/tenancy"
	"broll/webhook"
)

// NodeOptions are what a caller may put in place of production's wiring;
// the zero value is production's.
type NodeOptions struct {
	// Pool and Redis are connections the caller opened and closes (test
	// nodes share one database); nil opens DATABASE_URL and REDIS_URL, which
	// Node.Close closes.
	Pool  *pgxpool.Pool
	Redis *redis.Client
	// Logs receives the node's log lines at BROLL_LOG_LEVEL; nil drops them.
	Logs io.Writer
	// Now is the clock of sessions, sunsets and expiries; nil is time.Now.
	Now func() time.Time
	// Embedder embeds semantic_search texts; nil selects one as
	// BROLL_EMBED_PROVIDER says.
	Embedder embed.Embedder
}

// Node is one API node's service graph over its stores: the fiber app and
// the services that the binary, tests and benchmarks reach beside it.
type Node struct {
	App     *fiber.App
	Logger  *slog.Logger
	Pool    *pgxpool.Pool
	Redis   *redis.Client
	Media   media.Store
	Tenancy *tenancy.Service
	Billing *billing.Service
	Gate    *tenancy.Gate
	// Usage counts requests; its owner runs Usage.Run to flush them.
	Usage *tenancy.Usage
	// Metrics is what the node's metrics listener serves (kept off the
	// public port, so not on App).
	Metrics *prometheus.Registry
	// Warmup holds /readyz at 503 until the catalog is warm; its owner
	// starts it (Warmup.Start), as cmd/broll-api does.
	Warmup  *Warmup
	closers []func()
}

// NewNode builds the node as cfg says, opening what o does not supply. It
// is the one place the service graph is written: cmd/broll-api, the tests
// and the benchmarks all call it, so they run what production wires.
func NewNode(ctx context.Context, cfg config.Config, o NodeOptions) (_ *Node, err error) {
	if o.Logs == nil {
		o.Logs = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	n := &Node{Logger: logging.New(o.Logs, cfg.LogLevel), Pool: o.Pool, Redis: o.Redis}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	if n.Pool == nil {
		if n.Pool, err = database.Open(ctx, cfg.DatabaseURL, database.StatementTimeout(cfg.StatementTimeout)); err != nil {
			return nil, err
		}
		n.closers = append(n.closers, n.Pool.Close)
	}
	// Catalog reads go to the replica while it keeps up (none when unset).
	reads := replica.New(n.Pool, cfg.DatabaseReadURL, n.Logger)
	n.closers = append(n.closers, reads.Close)
	if n.Redis == nil {
		if n.Redis, err = redisx.Open(ctx, cfg.RedisURL); err != nil {
			return nil, err
		}
		rdb := n.Redis
		n.closers = append(n.closers, func() { _ = rdb.Close() })
	}
	if n.Media, err = media.Open(ctx, cfg); err != nil {
		return nil, err
	}
	embedder := o.Embedder
	if embedder == nil {
		if embedder, err = embed.Select(ctx, cfg.EmbedProvider, cfg.OllamaHost, cfg.EmbedModel, n.Logger); err != nil {
			return nil, err
		}
	}
	allow, err := webhook.ParseAllow(cfg.WebhookAllowHosts)
	if err != nil {
		return nil, fmt.Errorf("BROLL_WEBHOOK_ALLOW_HOSTS: %w", err)
	}
	// Webhook signing secrets and idempotent replays are sealed under BROLL_SIGNING_KEY.
	sealer, err := seal.New(cfg.SigningKey.Reveal(), cfg.SigningKeyPrevious.Reveal())
	if err != nil {
		return nil, err
	}

	pool, rdb := n.Pool, n.Redis
	n.Tenancy = tenancy.New(pool)
	n.Billing = billing.New(pool, billing.NewSigner(cfg.BaseURL(), cfg.SigningKey.Reveal(),
		cfg.SigningKeyPrevious.Reveal(), cfg.DownloadURLTTL, nil))
	n.Usage = tenancy.NewUsage(pool, rdb, cfg.RedisPrefix)
	n.Gate = tenancy.NewGate(rdb, cfg.RedisPrefix, cfg.RateLimitPerMinute, n.Usage, n.Logger)
	n.Metrics = metrics.NewRegistry()
	queue := tasks.NewAsynqQueue(asynq.NewClientFromRedisClient(rdb), asynq.NewInspectorFromRedisClient(rdb), cfg.RedisPrefix)
	cat := catalog.New(pool, n.Media, queue).WithReads(reads)
	srch := search.New(cat).WithEfSearch(cfg.SemanticEfSearch)
	qe := embed.NewCachedQueryEmbedder(embedder, rdb, cfg.RedisPrefix+"qemb:", embed.DefaultQueryCacheTTL)
	n.Warmup = newWarmup(srch, qe, pool, n.Logger, cfg.WarmupTimeout, n.Metrics)
	n.App = newApp(Deps{
		Config: cfg, Logger: n.Logger, Now: o.Now, Metrics: n.Metrics,
		Pool: pool, Redis: rdb, Media: n.Media, Sealer: sealer,
		Tenancy: n.Tenancy, Billing: n.Billing, Usage: n.Usage, Gate: n.Gate,
		Catalog:  cat,
		Search:   srch,
		Uploads:  media.NewUploads(pool, n.Media),
		Warmup:   n.Warmup,
		Webhooks: webhook.New(pool, allow, sealer),
		Auth:     tenancy.NewAuthenticator(pool, cfg.AuthCacheTTL),
		Sessions: tenancy.NewSessions(rdb, cfg.RedisPrefix, n.Tenancy, tenancy.SessionOptions{
			IdleTimeout: cfg.SessionTTL, MaxAge: cfg.SessionMaxAge,
			MaxFailures: cfg.SignInMaxFailures, Lockout: cfg.SignInLockout, Now: o.Now,
			GlobalAttempts: redis_rate.PerMinute(cfg.SignInGlobalPerMinute),
		}),
		QueryEmbedder: qe,
	})
	return n, nil
}

// Close releases what NewNode opened, in reverse order; the connections a
// caller supplied stay open.
func (n *Node) Close() {
	for i := len(n.closers) - 1; i >= 0; i-- {
		n.closers[i]()
	}
	n.closers = nil
}
