package api

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/tasks"
	"broll/internal/testkit"
)

// TestTwoPrefixesOnOneRedis: two nodes with different BROLL_REDIS_PREFIX on
// one Redis database, as two deployments (or two tests) sharing it. A key's
// rate limit and a purchase's download limit spent on one node are not
// spent on the other, and every key that names a key, purchase or clip of
// the test carries the prefix of the node that wrote it: the markers, the
// limiters and the asynq queue alike.
func TestTwoPrefixesOnOneRedis(t *testing.T) {
	t.Parallel()
	// One fetch a minute per purchase, and one request a minute for the
	// limited key: a limit shared by the two nodes would refuse the second
	// node's first request unless a minute passed in between.
	e := setup(t, envOpts{configure: func(c *config.Config) { c.DownloadsPerPurchasePerMinute = 1 }})
	other := testkit.Redis(t)
	cfg := e.cfg
	cfg.RedisPrefix = other.Prefix
	b := e.addNode(t, cfg, nil)
	prefixes := []string{e.cfg.RedisPrefix, other.Prefix}
	ctx := context.Background()

	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	root := acct.RootKey.Secret
	limited := acct.CustomerKey(t, e.pool, "limited")
	revoked := acct.CustomerKey(t, e.pool, "revoked")
	link := e.buyLinks(t, 1)[0]
	u, _ := url.Parse(link)
	purchase := u.Path[len(u.Path)-36:]
	// Each node writes a marker with days to live (a change, a
	// revocation), so that the check below finds keys under both prefixes
	// however long the test takes.
	if r := e.do(t, 0, "PATCH", "/api/v1/keys?id="+limited.ID.String(), root, map[string]any{"rate_limit_per_minute": 1}); r.status != 200 {
		t.Fatalf("limit the key: %d %s", r.status, r.raw)
	}
	if r := e.do(t, b, "DELETE", "/api/v1/keys?id="+revoked.ID.String(), root, nil); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.raw)
	}
	clip := e.importClip(t, 0)

	t.Run("rate limit", func(t *testing.T) {
		for _, n := range []int{0, b} {
			if r := e.do(t, n, "GET", "/api/v1/broll", limited.Secret, nil); r.status != 200 {
				t.Fatalf("node %d: %d %s; a node of the other prefix spent the key's one request a minute", n, r.status, r.raw)
			}
		}
	})
	t.Run("download limit", func(t *testing.T) {
		for _, n := range []int{0, b} {
			if r := e.open(t, n, link, nil); r.status != 200 {
				t.Fatalf("node %d: %d %s; a node of the other prefix spent the purchase's one fetch a minute", n, r.status, r.raw)
			}
		}
	})
	t.Run("every key under its prefix", func(t *testing.T) {
		found := map[string]bool{}
		for _, id := range []string{acct.RootKey.ID.String(), limited.ID.String(), revoked.ID.String(), purchase, clip.String()} {
			iter := e.rdb.Scan(ctx, 0, "*"+id+"*", 1000).Iterator()
			for iter.Next(ctx) {
				key := iter.Val()
				found[key] = true
				if !underPrefix(key, prefixes) {
					t.Errorf("key %q is under neither prefix %q", key, prefixes)
				}
			}
			if err := iter.Err(); err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []string{
			e.cfg.RedisPrefix + "changed:" + limited.ID.String(),
			other.Prefix + "revoked:" + revoked.ID.String(),
		} {
			if !found[want] {
				t.Errorf("no key %q among %v", want, found)
			}
		}
		// The clip's media batch (a batch of one): a task id names the
		// batch's digest, not its clips, so the key is looked up, not found
		// by the scan.
		media := tasks.MediaQueue(e.cfg.RedisPrefix)
		task := "asynq:{" + media + "}:t:" + tasks.TaskID(media, []uuid.UUID{clip})
		if n, err := e.rdb.Exists(ctx, task).Result(); err != nil || n != 1 {
			t.Errorf("no key %q (%d, %v)", task, n, err)
		}
	})
}

// underPrefix says whether key is one of the prefixes' keys, or a key of
// one of their asynq queues.
func underPrefix(key string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) || strings.HasPrefix(key, "asynq:{"+p) {
			return true
		}
	}
	return false
}

// importClip imports one clip through node n with an ops key and returns
// its id; the node queues its embedding.
func (e *testEnv) importClip(t *testing.T, n int) uuid.UUID {
	t.Helper()
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	full, _, _ := e.clipFiles(t)
	id := uuid.New()
	clip := map[string]any{"id": id, "title": "Woman waving at the camera", "emotion": "happy", "gender": "female",
		"difficulty": "easy", "media_file": full}
	if r := e.do(t, n, "POST", "/api/ops/v1/videos", ops.Secret, []map[string]any{clip}); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.raw)
	}
	return id
}
