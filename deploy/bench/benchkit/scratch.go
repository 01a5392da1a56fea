package benchkit

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/api"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/money"
	"broll/internal/telemetry"
	"broll/tenancy"
	"broll/wiring"
)

// Scratch is one benchmark run's world: a migrated database of its own on
// the local stack, the stack's Redis under a fresh key prefix, and the
// service configuration pointing at both.
type Scratch struct {
	URL    string
	Pool   *pgxpool.Pool
	Redis  *redis.Client
	Config config.Config
	// Telemetry traces the nodes, the pool and the Redis client as the
	// OTEL_* variables say, as in a process (off without an endpoint).
	Telemetry *telemetry.Provider
	close     []func()
}

// OpenScratch creates and migrates the database and opens the clients.
// redisPoolSize 0 keeps go-redis's default. With keep the database
// outlives Close (its URL is printed).
func OpenScratch(ctx context.Context, redisPoolSize int, keep bool) (*Scratch, error) {
	admin, redisURL, err := StackURLs()
	if err != nil {
		return nil, err
	}
	dbURL, drop, err := ScratchDatabase(ctx, admin)
	if err != nil {
		return nil, err
	}
	s := &Scratch{URL: dbURL}
	if keep {
		s.close = append(s.close, func() { fmt.Println("kept the scratch database:", dbURL) })
	} else {
		s.close = append(s.close, drop)
	}
	if err := s.open(ctx, redisURL, redisPoolSize); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenKept opens a database an earlier run kept (-keep), migrating it to
// this build's schema; Close leaves it in place.
func OpenKept(ctx context.Context, dbURL string, redisPoolSize int) (*Scratch, error) {
	_, redisURL, err := StackURLs()
	if err != nil {
		return nil, err
	}
	s := &Scratch{URL: dbURL}
	if err := s.open(ctx, redisURL, redisPoolSize); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Scratch) open(ctx context.Context, redisURL string, redisPoolSize int) error {
	if _, err := database.Migrate(ctx, s.URL, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	tp, err := wiring.NewTelemetry(ctx, telemetry.ProviderOptions{ServiceName: "broll-bench"})
	if err != nil {
		return err
	}
	s.Telemetry = tp
	s.close = append(s.close, func() { _ = tp.Shutdown(context.Background()) })
	pool, err := database.Open(ctx, s.URL, database.Tracer(tp.PoolTracer()))
	if err != nil {
		return err
	}
	s.Pool = pool
	s.close = append(s.close, pool.Close)
	ropts, err := redis.ParseURL(redisURL)
	if err != nil {
		return err
	}
	if redisPoolSize > 0 {
		ropts.PoolSize = redisPoolSize
	}
	s.Redis = redis.NewClient(ropts)
	s.close = append(s.close, func() { _ = s.Redis.Close() })
	if err := tp.InstrumentRedis(s.Redis); err != nil {
		return err
	}
	mediaDir, err := os.MkdirTemp("", "broll-bench-media-")
	if err != nil {
		return err
	}
	s.close = append(s.close, func() { _ = os.RemoveAll(mediaDir) })
	signingKey := config.GenerateSecret()
	// The built-in embedder: a benchmark measures the node, not a model
	// server that may not be running.
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": s.URL, "REDIS_URL": redisURL,
			"BROLL_SIGNING_KEY": signingKey, "BROLL_MEDIA_DIR": mediaDir, "BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		return err
	}
	cfg.RedisPrefix = fmt.Sprintf("bench%d:", time.Now().UnixNano())
	// A limit no client reaches: every request runs the limiter, none is
	// refused.
	cfg.RateLimitPerMinute = 1_000_000
	s.Config = cfg
	return nil
}

// Close releases everything, in reverse order of opening.
func (s *Scratch) Close() {
	for i := len(s.close) - 1; i >= 0; i-- {
		s.close[i]()
	}
}

// Graph opens the service graph with parts as the composition root does
// for a process, over the scratch world and its Config as the benchmark
// left it; Close closes it.
func (s *Scratch) Services(ctx context.Context, parts wiring.Parts) (*wiring.Services, error) {
	g, err := wiring.Open(ctx, s.Config, wiring.Options{Parts: parts, Pool: s.Pool, Redis: s.Redis,
		Telemetry: s.Telemetry})
	if err != nil {
		return nil, err
	}
	s.close = append(s.close, g.Close)
	return g, nil
}

// Node builds the API node as cmd/broll-api does, over the scratch world
// and its Config as the benchmark left it, and returns it with the services
// it is built over; Close closes them.
func (s *Scratch) Node(ctx context.Context) (*api.Node, *wiring.Services, error) {
	g, err := s.Services(ctx, wiring.APIParts)
	if err != nil {
		return nil, nil, err
	}
	n, err := api.NewNode(g)
	return n, g, err
}

// Account opens an account and returns its root key, which no rate limit
// stops.
func (s *Scratch) Account(ctx context.Context) (tenancy.IssuedKey, error) {
	// A source of its own: a kept database already has the earlier run's.
	source := fmt.Sprintf("bench-%d", time.Now().UnixNano()%1e9)
	g, err := s.Services(ctx, 0)
	if err != nil {
		return tenancy.IssuedKey{}, err
	}
	opened, err := g.Billing.OpenAccount(ctx, "Bench", source, money.Cents(100))
	if err != nil {
		return tenancy.IssuedKey{}, err
	}
	_, err = s.Pool.Exec(ctx, `UPDATE api_keys SET rate_limit_per_minute = 100000000`)
	return opened.RootKey, err
}

// Serve runs app on a free loopback port; it returns the address and a
// function that shuts the app down.
func Serve(app *fiber.App) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() { _ = app.Listener(ln) }()
	return ln.Addr().String(), func() { _ = app.Shutdown() }, nil
}
