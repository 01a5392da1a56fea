package api

import (
	"context"
	"fmt"
	"time"

	segjson "github.com/segmentio/encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/internal/apperr"
	"broll/wiring"
)

// newApp builds the fiber app with every route and middleware over g, and
// the warm-up that gates its /readyz.
func newApp(g *wiring.Services) (*fiber.App, *Warmup, error) {
	cfg := g.Config
	app := fiber.New(fiber.Config{
		AppName:               "broll-api",
		BodyLimit:             cfg.MaxBodyBytes,
		ErrorHandler:          errorHandler(g.Logger, cfg.BaseURL()),
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
		// Answers are encoded by segmentio/encoding's json, which writes
		// what encoding/json writes (the same escaping, number and map
		// key order; TestAnswersEncodeAsEncodingJSONDoes holds it to that)
		// in about half the CPU: a page of clips is mostly its JSON.
		JSONEncoder: segjson.Marshal,
	})
	m, err := newAPIMetrics(g.Metrics, g.Gate, newAccessLog(g.Logger, cfg))
	if err != nil {
		return nil, nil, err
	}
	warmup := newWarmup(g.Search, g.QueryEmbedder, g.Pool, g.Logger, cfg.WarmupTimeout, g.Metrics)
	refuseUnknownMethods(app, cfg.BaseURL())
	app.Use(withRequestID)
	app.Use(newTracing(g.Telemetry).handle)
	app.Use(cancelOnDisconnect)
	app.Use(m.observe)
	app.Use(recover.New())
	app.Use(legacyPrefix, markLegacy(legacyHeaders(cfg, cfg.BaseURL())))
	app.Use(boundBodies(cfg.MaxBodyBytes))
	app.Use(decodeBodies(cfg.MaxBodyBytes))

	x, err := newSurfaces(g, m, warmup)
	if err != nil {
		return nil, nil, err
	}
	app.Server().HeaderReceived = x.edge.screenBodies(cfg.MaxBodyBytes, x)
	if err := mount(app, routes(x)); err != nil {
		return nil, nil, fmt.Errorf("api: route table: %w", err)
	}

	// Everything else: 405 with Allow on a known path, 404 problem+json on
	// an unknown one. Fiber's own 405 never fires, since this catch-all
	// matches every request.
	app.Use(newAllowTable(app).unrouted)
	return app, warmup, nil
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
