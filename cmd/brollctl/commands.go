package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"broll/billing"
	"broll/billing/license"
	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/mediajobs"
	"broll/catalog/search"
	"broll/collections"
	"broll/demo"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/money"
	"broll/tenancy"
	"broll/webhook"
	"broll/wiring"
)

// env is what the database-backed commands share, opened lazily so that a
// usage error never needs a database.
type env struct {
	cfg     config.Config
	rdb     *redis.Client
	tenancy *tenancy.Service
	billing *billing.Service
	catalog *catalog.Service
	// collections are the keys' shortlists of clips.
	collections *collections.Service
	// search calibrates semantic search's candidate list.
	search *search.Service
	// imports imports clips into the catalog.
	imports *imports.Service
	// mediaJobs reprobes the catalog's clip files.
	mediaJobs *mediajobs.Service
	// sessions are the dashboard's, which a password reset ends.
	sessions *tenancy.Sessions
	// keyChanges changes and revokes keys everywhere: this process has no auth cache
	// that matters, and the markers reach the API nodes' caches.
	keyChanges *tenancy.KeyChanges
	// licenses is nil without a signing secret (BROLL_SIGNING_KEY or
	// BROLL_LICENSE_SIGNING_KEY).
	licenses *license.Service
	// stamps are the licence-stamped copies of purchased files.
	stamps *license.Stamper
}

// call is a command's work on the opened environment.
type call func(ctx context.Context, e *env) (any, error)

// with opens the environment, makes the call and closes it.
func (c *cli) with(ctx context.Context, fn call) (any, error) {
	return c.withParts(ctx, wiring.CLIParts, fn)
}

// withParts is with over a graph of parts.
func (c *cli) withParts(ctx context.Context, parts wiring.Parts, fn call) (any, error) {
	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	g, err := wiring.Open(ctx, cfg, wiring.Options{Parts: parts})
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return fn(ctx, &env{
		cfg: cfg, rdb: g.Redis, tenancy: g.Tenancy, billing: g.Billing, catalog: g.Catalog, collections: g.Collections,
		imports: g.Imports, mediaJobs: g.MediaJobs, search: g.Search,
		sessions: g.Sessions, keyChanges: g.KeyChanges, licenses: g.Licenses, stamps: g.Stamps,
	})
}

// config is the configuration every command runs with: the CLI's own
// statement timeout, since imports and migrations run long by design.
func (c *cli) config() (config.Config, error) {
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return config.Config{}, err
	}
	cfg.StatementTimeout = cfg.CtlStatementTimeout
	return cfg, nil
}

// opened is the action of a command with no checks but its flags': the call
// on the opened environment.
func (c *cli) opened(fn call) action {
	return func(ctx context.Context) (any, error) { return c.with(ctx, fn) }
}

func (c *cli) migrate(*flags) action {
	return func(ctx context.Context) (any, error) {
		cfg, err := c.config()
		if err != nil {
			return nil, err
		}
		applied, err := database.Migrate(ctx, cfg.DatabaseURL, slog.New(slog.NewTextHandler(c.stderr, nil)))
		if err != nil {
			return nil, err
		}
		// The database alone: migrate runs while Redis may still be away.
		g, err := wiring.Open(ctx, cfg, wiring.Options{})
		if err != nil {
			return nil, err
		}
		defer g.Close()
		pool := g.Pool
		v, err := database.Version(ctx, pool)
		if err != nil {
			return nil, err
		}
		if applied == nil {
			applied = []string{}
		}
		out := map[string]any{"applied": applied, "version": v}
		// Webhook secrets stored in plaintext before they were sealed need
		// the server key, which SQL has not: sealed here when migrate has
		// it, else by the worker when it starts.
		if cfg.SigningKey != "" {
			sealer, err := wiring.NewSealer(cfg)
			if err != nil {
				return nil, err
			}
			if out["webhook_secrets_sealed"], err = webhook.SealSecrets(ctx, pool, sealer); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

func (c *cli) accountCreate(f *flags) action {
	const missing = "account create needs --name and --source"
	name := f.required("name", "account name", missing)
	source := f.required("source", "unique source slug", missing)
	credits := f.String("credits", "0", "opening balance in USD")
	return func(ctx context.Context) (any, error) {
		amount, err := money.ParseDollars(*credits)
		if err != nil {
			return nil, apperr.InvalidField("credits", "--credits: %v", err)
		}
		// The name is the platform's on its licences: with the fonts, one a
		// certificate could not print is refused.
		return c.withParts(ctx, wiring.CLIParts|wiring.Fonts, func(ctx context.Context, e *env) (any, error) {
			opened, err := e.billing.OpenAccount(ctx, *name, *source, amount)
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
}

func (c *cli) keyCreateRoot(f *flags) action {
	id := f.id("account")
	label := f.String("label", "", "label")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		k, err := e.tenancy.CreateRootKey(ctx, *id, *label)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": k.ID, "api_key": k.Secret, "account_id": *id, "kind": k.Kind}, nil
	})
}

func (c *cli) keyCreateOps(f *flags) action {
	label := f.String("label", "", "label")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		k, err := e.tenancy.CreateOpsKey(ctx, *label)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": k.ID, "api_key": k.Secret, "kind": k.Kind, "scopes": k.Scopes}, nil
	})
}

func (c *cli) keyRevoke(f *flags) action {
	id := f.id("id")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		rev, err := e.keyChanges.Revoke(ctx, tenancy.KeyScope{}, *id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": rev.Key.ID, "revoked_at": rev.Key.RevokedAt, "revoked_keys": rev.Revoked}, nil
	})
}

// keyLimit sets a customer key's spend limit and rate limit, as PATCH
// /api/v1/keys does for its root key, and publishes the change to the API
// nodes' caches.
func (c *cli) keyLimit(f *flags) action {
	id := f.id("id")
	spend := f.String("spend", "", "spend limit in USD")
	period := f.String("period", "month", "spend limit period: day, month or total")
	noSpend := f.Bool("no-spend-limit", false, "remove the spend limit")
	rate := f.Int("rate", 0, "requests per minute")
	defaultRate := f.Bool("default-rate", false, "back to the service's default rate limit")
	return func(ctx context.Context) (any, error) {
		var u tenancy.KeyUpdate
		switch {
		case *spend != "" && *noSpend:
			return nil, usageErr("--spend and --no-spend-limit exclude each other")
		case *spend != "":
			cents, err := money.ParseDollars(*spend)
			if err != nil {
				return nil, usageErr("--spend: %v", err)
			}
			l, err := tenancy.ParseSpendLimit(cents, *period)
			if err != nil {
				return nil, err
			}
			u.SpendLimitSet, u.SpendLimit = true, &l
		case *noSpend:
			u.SpendLimitSet = true
		}
		switch {
		case *rate != 0 && *defaultRate:
			return nil, usageErr("--rate and --default-rate exclude each other")
		case *rate != 0:
			u.RateLimitSet, u.RateLimit = true, rate
		case *defaultRate:
			u.RateLimitSet = true
		}
		if !u.SpendLimitSet && !u.RateLimitSet {
			return nil, usageErr("key limit needs --spend, --no-spend-limit, --rate or --default-rate")
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			k, err := e.keyChanges.Update(ctx, tenancy.KeyScope{}, *id, u)
			if err != nil {
				return nil, err
			}
			out := map[string]any{"id": k.ID, "spend_limit": nil, "spent": k.Spent.Amount,
				"rate_limit_per_minute": k.RateLimitPerMinute}
			if k.SpendLimit != nil {
				out["spend_limit"] = map[string]any{"amount": k.SpendLimit.Amount, "period": k.SpendLimit.Period, "currency": "USD"}
			}
			return out, nil
		})
	}
}

func (c *cli) creditsAdd(f *flags) action {
	id := f.id("account")
	amount := f.required("amount", "amount in USD", "--amount is required")
	return func(ctx context.Context) (any, error) {
		cents, err := money.ParseDollars(*amount)
		if err != nil {
			return nil, apperr.InvalidField("amount", "--amount: %v", err)
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			balance, err := e.billing.TopUp(ctx, *id, cents, "brollctl credits add")
			if err != nil {
				return nil, err
			}
			return map[string]any{"account_id": *id, "added": cents, "balance": balance, "currency": "USD"}, nil
		})
	}
}

func tierJSON(t catalog.Tier) map[string]any {
	return map[string]any{"name": t.Name, "price": t.PriceCents, "currency": "USD"}
}

func (c *cli) tiersList(*flags) action {
	return c.opened(func(ctx context.Context, e *env) (any, error) {
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

func (c *cli) tiersSet(f *flags) action {
	return func(ctx context.Context) (any, error) {
		price, err := money.ParseDollars(f.Arg(1))
		if err != nil {
			return nil, apperr.InvalidField("price", "price: %v", err)
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			t, err := e.catalog.SetTier(ctx, f.Arg(0), price)
			if err != nil {
				return nil, err
			}
			return tierJSON(t), nil
		})
	}
}

func (c *cli) clipsImport(f *flags) action {
	return func(ctx context.Context) (any, error) {
		in, baseDir := c.stdin, "."
		if path := f.Arg(0); path != "-" {
			file, err := os.Open(path)
			if err != nil {
				// The cause alone: os.Open's *PathError repeats the path.
				return nil, apperr.New(apperr.Invalid, "cannot open %s: %v", path, errors.Unwrap(err))
			}
			defer file.Close()
			in, baseDir = file, filepath.Dir(path)
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			return e.imports.Import(ctx, in, baseDir, c.progress("import", "lines"))
		})
	}
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

func (c *cli) clipsStatus(*flags) action {
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		return e.catalog.Status(ctx, c.currentModel(ctx, e.cfg))
	})
}

func (c *cli) clipsReembed(f *flags) action {
	all := f.Bool("all", false, "re-embed every clip")
	failed := f.Bool("failed", false, "re-queue failed clips")
	return func(ctx context.Context) (any, error) {
		if *all && *failed {
			return nil, usageErr("clips reembed takes --all or --failed, not both")
		}
		mode := ""
		if *all {
			mode = "all"
		} else if *failed {
			mode = "failed"
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			n, err := e.catalog.Reembed(ctx, mode, c.currentModel(ctx, e.cfg))
			if err != nil {
				return nil, err
			}
			return map[string]any{"queued": n, "mode": strings.TrimSpace(mode + " ")}, nil
		})
	}
}

func (c *cli) seedDemo(f *flags) action {
	count := f.Int("count", 200, "number of clips")
	return func(ctx context.Context) (any, error) {
		if *count < 1 || *count > 1_000_000 {
			return nil, apperr.InvalidField("count", "--count must be between 1 and 1000000, got %s", strconv.Itoa(*count))
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			return demo.Seed(ctx, e.catalog, e.imports, *count, time.Now().UnixNano())
		})
	}
}

// currentModel is the model the worker would embed with under this
// configuration (in auto mode: Ollama if it answers with the model).
func (c *cli) currentModel(ctx context.Context, cfg config.Config) string {
	e, err := wiring.SelectEmbedder(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return cfg.EmbedModel
	}
	return e.Model()
}
