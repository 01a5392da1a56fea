package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/billing"
	"broll/catalog"
	"broll/embed"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/money"
	"broll/internal/redisx"
	"broll/internal/tasks"
	"broll/tenancy"
)

// env is what the database-backed commands share, opened lazily so that a
// usage error never needs a database.
type env struct {
	cfg     config.Config
	pool    *pgxpool.Pool
	rdb     *redis.Client
	tenancy *tenancy.Service
	billing *billing.Service
	catalog *catalog.Service
}

// with opens the environment, runs fn on it and closes it.
func (c *cli) with(ctx context.Context, fn func(e *env) (any, error)) (any, error) {
	e, done, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return fn(e)
}

func (c *cli) open(ctx context.Context) (*env, func(), error) {
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return nil, nil, err
	}
	pool, err := database.Open(ctx, cfg.DatabaseURL, database.StatementTimeout(cfg.CtlStatementTimeout))
	if err != nil {
		return nil, nil, err
	}
	rdb, err := redisx.Open(cfg.RedisURL)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	media, err := catalog.OpenMediaStore(ctx, cfg)
	if err != nil {
		pool.Close()
		_ = rdb.Close()
		return nil, nil, err
	}
	queue := tasks.NewAsynqQueue(asynq.NewClientFromRedisClient(rdb), asynq.NewInspectorFromRedisClient(rdb))
	e := &env{
		cfg: cfg, pool: pool, rdb: rdb,
		tenancy: tenancy.New(pool),
		billing: billing.New(pool, nil),
		catalog: catalog.New(pool, media, queue),
	}
	e.billing.SetTestBalance(money.Cents(cfg.TestBalance))
	return e, func() { pool.Close(); _ = rdb.Close() }, nil
}

func parseID(flagName, v string) (uuid.UUID, error) {
	if v == "" {
		return uuid.Nil, usageErr("--%s is required", flagName)
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return uuid.Nil, apperr.InvalidField(flagName, "--%s %q is not a UUID", flagName, v)
	}
	return id, nil
}

func (c *cli) migrate(ctx context.Context, args []string) (any, error) {
	if _, err := c.flags("migrate", args, 0, func(*flag.FlagSet) {}); err != nil {
		return nil, err
	}
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return nil, err
	}
	applied, err := database.Migrate(ctx, cfg.DatabaseURL, slog.New(slog.NewTextHandler(c.stderr, nil)))
	if err != nil {
		return nil, err
	}
	pool, err := database.Open(ctx, cfg.DatabaseURL, database.StatementTimeout(cfg.CtlStatementTimeout))
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	v, err := database.Version(ctx, pool)
	if err != nil {
		return nil, err
	}
	if applied == nil {
		applied = []string{}
	}
	return map[string]any{"applied": applied, "version": v}, nil
}

func (c *cli) accountCreate(ctx context.Context, args []string) (any, error) {
	var name, source, credits string
	if _, err := c.flags("account create", args, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "", "account name")
		fs.StringVar(&source, "source", "", "unique source slug")
		fs.StringVar(&credits, "credits", "0", "opening balance in USD")
	}); err != nil {
		return nil, err
	}
	if name == "" || source == "" {
		return nil, usageErr("account create needs --name and --source")
	}
	amount, err := money.ParseDollars(credits)
	if err != nil {
		return nil, apperr.InvalidField("credits", "--credits: %v", err)
	}
	return c.with(ctx, func(e *env) (any, error) {
		opened, err := e.billing.OpenAccount(ctx, name, source, amount)
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"account_id":  opened.Account.ID,
			"name":        opened.Account.Name,
			"source":      opened.Account.Source,
			"root_key":    opened.RootKey.Secret,
			"root_key_id": opened.RootKey.ID,
			"balance":     money.Cents(opened.Account.BalanceCents),
			"currency":    "USD",
		}, nil
	})
}

func (c *cli) keyCreateRoot(ctx context.Context, args []string) (any, error) {
	var label string
	id, err := c.idFlags("key create-root", args, "account", func(fs *flag.FlagSet) {
		fs.StringVar(&label, "label", "", "label")
	})
	if err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		k, err := e.tenancy.CreateRootKey(ctx, id, label)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": k.ID, "api_key": k.Secret, "account_id": id, "kind": k.Kind}, nil
	})
}

func (c *cli) keyCreateOps(ctx context.Context, args []string) (any, error) {
	var label string
	if _, err := c.flags("key create-ops", args, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&label, "label", "", "label")
	}); err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		k, err := e.tenancy.CreateOpsKey(ctx, label)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": k.ID, "api_key": k.Secret, "kind": k.Kind, "scopes": k.Scopes}, nil
	})
}

func (c *cli) keyRevoke(ctx context.Context, args []string) (any, error) {
	id, err := c.idFlags("key revoke", args, "id", func(*flag.FlagSet) {})
	if err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		// No auth cache here: the markers reach the API nodes' caches.
		rev, err := tenancy.NewRevoker(e.tenancy, e.rdb, e.cfg.RedisPrefix, nil).Revoke(ctx, tenancy.RevokeScope{}, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": rev.Key.ID, "revoked_at": rev.Key.RevokedAt, "revoked_keys": rev.Revoked}, nil
	})
}

// keyLimit sets a customer key's spend limit and rate limit, as PATCH
// /api/v1/keys does for its root key, and publishes the change to the API
// nodes' caches.
func (c *cli) keyLimit(ctx context.Context, args []string) (any, error) {
	var spend, period string
	var noSpend, defaultRate bool
	var rate int
	id, err := c.idFlags("key limit", args, "id", func(fs *flag.FlagSet) {
		fs.StringVar(&spend, "spend", "", "spend limit in USD")
		fs.StringVar(&period, "period", "month", "spend limit period: day, month or total")
		fs.BoolVar(&noSpend, "no-spend-limit", false, "remove the spend limit")
		fs.IntVar(&rate, "rate", 0, "requests per minute")
		fs.BoolVar(&defaultRate, "default-rate", false, "back to the service's default rate limit")
	})
	if err != nil {
		return nil, err
	}
	var u tenancy.KeyUpdate
	switch {
	case spend != "" && noSpend:
		return nil, usageErr("--spend and --no-spend-limit exclude each other")
	case spend != "":
		cents, err := money.ParseDollars(spend)
		if err != nil {
			return nil, usageErr("--spend: %v", err)
		}
		l, err := tenancy.ParseSpendLimit(cents, period)
		if err != nil {
			return nil, err
		}
		u.SpendLimitSet, u.SpendLimit = true, &l
	case noSpend:
		u.SpendLimitSet = true
	}
	switch {
	case rate != 0 && defaultRate:
		return nil, usageErr("--rate and --default-rate exclude each other")
	case rate != 0:
		u.RateLimitSet, u.RateLimit = true, &rate
	case defaultRate:
		u.RateLimitSet = true
	}
	if !u.SpendLimitSet && !u.RateLimitSet {
		return nil, usageErr("key limit needs --spend, --no-spend-limit, --rate or --default-rate")
	}
	return c.with(ctx, func(e *env) (any, error) {
		k, err := e.tenancy.UpdateKey(ctx, id, u)
		if err != nil {
			return nil, err
		}
		if err := tenancy.MarkChanged(ctx, e.rdb, e.cfg.RedisPrefix, k.ID, k.SettingsVersion); err != nil {
			return nil, fmt.Errorf("changed in the database, but not yet on every API node (run again): %w", err)
		}
		out := map[string]any{"id": k.ID, "spend_limit": nil, "spent": k.Spent.Amount, "rate_limit_per_minute": k.RateLimitPerMinute}
		if k.SpendLimit != nil {
			out["spend_limit"] = map[string]any{"amount": k.SpendLimit.Amount, "period": k.SpendLimit.Period, "currency": "USD"}
		}
		return out, nil
	})
}

func (c *cli) creditsAdd(ctx context.Context, args []string) (any, error) {
	var amount string
	id, err := c.idFlags("credits add", args, "account", func(fs *flag.FlagSet) {
		fs.StringVar(&amount, "amount", "", "amount in USD")
	})
	if err != nil {
		return nil, err
	}
	if amount == "" {
		return nil, usageErr("--amount is required")
	}
	cents, err := money.ParseDollars(amount)
	if err != nil {
		return nil, apperr.InvalidField("amount", "--amount: %v", err)
	}
	return c.with(ctx, func(e *env) (any, error) {
		balance, err := e.billing.TopUp(ctx, id, cents, "brollctl credits add")
		if err != nil {
			return nil, err
		}
		return map[string]any{"account_id": id, "added": cents, "balance": balance, "currency": "USD"}, nil
	})
}

func tierJSON(t catalog.Tier) map[string]any {
	return map[string]any{"name": t.Name, "price": t.PriceCents, "currency": "USD"}
}

func (c *cli) tiersList(ctx context.Context, args []string) (any, error) {
	if _, err := c.flags("tiers list", args, 0, func(*flag.FlagSet) {}); err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		tiers, err := e.catalog.ListTiers(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(tiers))
		for i, t := range tiers {
			out[i] = tierJSON(t)
		}
		return map[string]any{"currency": "USD", "tiers": out}, nil
	})
}

func (c *cli) tiersSet(ctx context.Context, args []string) (any, error) {
	pos, err := c.flags("tiers set", args, 2, func(*flag.FlagSet) {})
	if err != nil {
		return nil, err
	}
	price, err := money.ParseDollars(pos[1])
	if err != nil {
		return nil, apperr.InvalidField("price", "price: %v", err)
	}
	return c.with(ctx, func(e *env) (any, error) {
		t, err := e.catalog.SetTier(ctx, pos[0], price)
		if err != nil {
			return nil, err
		}
		return tierJSON(t), nil
	})
}

func (c *cli) clipsImport(ctx context.Context, args []string) (any, error) {
	pos, err := c.flags("clips import", args, 1, func(*flag.FlagSet) {})
	if err != nil {
		return nil, err
	}
	in, baseDir := c.stdin, "."
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return nil, apperr.New(apperr.Invalid, "cannot open %s: %v", pos[0], errorsUnwrapAll(err))
		}
		defer f.Close()
		in, baseDir = f, filepath.Dir(pos[0])
	}
	return c.with(ctx, func(e *env) (any, error) {
		return e.catalog.Import(ctx, in, baseDir, c.progress("import", "lines"))
	})
}

// progress reports on a terminal only: scripts reading stdout get JSON alone.
func (c *cli) progress(what, unit string) func(done, total int) {
	f, ok := c.stderr.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	start := time.Now()
	return func(done, total int) {
		rate := float64(done) / max(time.Since(start).Seconds(), 0.001)
		fmt.Fprintf(f, "\r%s: %d/%d %s (%.0f/s)", what, done, total, unit, rate)
		if done >= total {
			fmt.Fprintln(f)
		}
	}
}

func (c *cli) clipsStatus(ctx context.Context, args []string) (any, error) {
	if _, err := c.flags("clips status", args, 0, func(*flag.FlagSet) {}); err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		return e.catalog.Status(ctx, c.currentModel(ctx, e.cfg))
	})
}

func (c *cli) clipsReembed(ctx context.Context, args []string) (any, error) {
	var all, failed bool
	if _, err := c.flags("clips reembed", args, 0, func(fs *flag.FlagSet) {
		fs.BoolVar(&all, "all", false, "re-embed every clip")
		fs.BoolVar(&failed, "failed", false, "re-queue failed clips")
	}); err != nil {
		return nil, err
	}
	if all && failed {
		return nil, usageErr("clips reembed takes --all or --failed, not both")
	}
	mode := ""
	if all {
		mode = "all"
	} else if failed {
		mode = "failed"
	}
	return c.with(ctx, func(e *env) (any, error) {
		n, err := e.catalog.Reembed(ctx, mode, c.currentModel(ctx, e.cfg))
		if err != nil {
			return nil, err
		}
		return map[string]any{"queued": n, "mode": strings.TrimSpace(mode + " ")}, nil
	})
}

func (c *cli) seedDemo(ctx context.Context, args []string) (any, error) {
	var count int
	if _, err := c.flags("seed-demo", args, 0, func(fs *flag.FlagSet) {
		fs.IntVar(&count, "count", 200, "number of clips")
	}); err != nil {
		return nil, err
	}
	if count < 1 || count > 1_000_000 {
		return nil, apperr.InvalidField("count", "--count must be between 1 and 1000000, got %s", strconv.Itoa(count))
	}
	return c.with(ctx, func(e *env) (any, error) {
		return e.catalog.SeedDemo(ctx, count, time.Now().UnixNano())
	})
}

// currentModel is the model the worker would embed with under this
// configuration (in auto mode: Ollama if it answers with the model).
func (c *cli) currentModel(ctx context.Context, cfg config.Config) string {
	e, err := embed.Select(ctx, cfg.EmbedProvider, cfg.OllamaHost, cfg.EmbedModel, slog.New(slog.DiscardHandler))
	if err != nil {
		return cfg.EmbedModel
	}
	return e.Model()
}

func errorsUnwrapAll(err error) error {
	if pe := (*os.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
