package wiring_test

import (
	"context"
	"strings"
	"testing"

	"broll/internal/config"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// Open builds the database's services in every graph and each part only
// when asked for, so brollctl needs no signing key and opens no embedder,
// and the worker's delivery comes with the secrets it opens.
func TestOpenBuildsThePartsAskedFor(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix, "BROLL_MEDIA_DIR": t.TempDir(),
			"BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T, parts wiring.Parts) *wiring.Services {
		return wiringtest.Open(t, cfg, wiring.Options{Parts: parts, Pool: pool, Redis: rds.Client})
	}
	built := func(g *wiring.Services) map[string]bool {
		return map[string]bool{
			"Redis": g.Redis != nil && g.Gate != nil && g.Usage != nil && g.Sessions != nil && g.KeyChanges != nil &&
				g.Downloads != nil && g.Queue != nil && g.QueueConn != nil,
			"Media":    g.Media != nil,
			"Embedder": g.Embedder != nil && g.QueryEmbedder != nil,
			"Secrets":  g.Sealer != nil && g.Webhooks != nil && g.Idempotency != nil,
			"Replica":  g.Reads != nil,
			"Delivery": g.Deliverer != nil,
		}
	}
	for _, c := range []struct {
		parts wiring.Parts
		want  string
	}{
		{0, ""},
		{wiring.CLIParts, "Redis Media"},
		{wiring.APIParts, "Redis Media Embedder Secrets Replica"},
		{wiring.WorkerParts, "Redis Media Embedder Secrets Delivery"},
		{wiring.Delivery, "Secrets Delivery"},
	} {
		t.Run(c.parts.String(), func(t *testing.T) {
			g := open(t, c.parts)
			if g.Pool == nil || g.Tenancy == nil || g.Auth == nil || g.Billing == nil || g.Catalog == nil || g.Metrics == nil {
				t.Fatalf("the database's services are missing: %+v", g)
			}
			var got []string
			for _, p := range strings.Fields("Redis Media Embedder Secrets Replica Delivery") {
				if built(g)[p] {
					got = append(got, p)
				}
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("built %q, want %q", got, c.want)
			}
		})
	}

	t.Run("Require names what is missing", func(t *testing.T) {
		err := open(t, wiring.CLIParts).Require("api", wiring.APIParts)
		if err == nil || !strings.Contains(err.Error(), "Embedder|Secrets|Replica") {
			t.Fatalf("Require = %v", err)
		}
		if err := open(t, wiring.APIParts).Require("api", wiring.APIParts); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("secrets need the signing key", func(t *testing.T) {
		noKey := cfg
		noKey.SigningKey = ""
		_, err := wiring.Open(context.Background(), noKey, wiring.Options{Parts: wiring.CLIParts | wiring.Secrets, Pool: pool, Redis: rds.Client})
		if err == nil || !strings.Contains(err.Error(), "BROLL_SIGNING_KEY") {
			t.Fatalf("Open without a signing key = %v", err)
		}
		wiringtest.Open(t, noKey, wiring.Options{Parts: wiring.CLIParts, Pool: pool, Redis: rds.Client})
	})
}
