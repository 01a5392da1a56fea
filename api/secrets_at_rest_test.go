package api

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestNoSecretAtRest makes every kind of secret the service hands out (API
// keys, created with an Idempotency-Key so that their answer is stored, a
// purchase's signed download link, a set-password link, a dashboard
// session and its CSRF token), then reads a pg_dump of the database and
// every key and value in Redis: none of them may appear in plaintext, while
// a replay still gives the created key back.
func TestNoSecretAtRest(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	secrets := map[string]string{"root key": acct.RootKey.Secret}

	header := map[string]string{"Authorization": "Bearer " + acct.RootKey.Secret, "Idempotency-Key": "create-secret"}
	body := map[string]any{"customer_label": "sealed"}
	first := expect[brollclient.KeyCreated](t, e.send(t, 0, "POST", "/api/v1/keys", header, body), 201)
	replay := e.send(t, 0, "POST", "/api/v1/keys", header, body)
	if replay.header.Get("Idempotent-Replayed") != "true" || expect[brollclient.KeyCreated](t, replay, 201).ApiKey != first.ApiKey {
		t.Fatalf("the replay must give the same key back: %s", replay.raw)
	}
	secrets["created key"] = first.ApiKey
	test := expect[brollclient.KeyCreated](t, e.send(t, 0, "POST", "/api/v1/keys",
		map[string]string{"Authorization": "Bearer " + acct.RootKey.Secret, "Idempotency-Key": "create-test"},
		map[string]any{"customer_label": "sealed test", "mode": "test"}), 201)
	secrets["created test key"] = test.ApiKey

	clip := billingtest.Videos(t, e.pool, 1, "easy")[0].String()
	bought := expect[brollclient.PurchaseResult](t, e.send(t, 0, "POST", "/api/v1/broll/purchase",
		map[string]string{"Authorization": "Bearer " + first.ApiKey, "Idempotency-Key": "buy-secret"},
		map[string]any{"video_ids": []string{clip}}), 200)
	link, err := url.Parse(downloadLink(bought.Purchases, 0))
	if err != nil || link.Query().Get("sig") == "" {
		t.Fatalf("download link %q: %v", downloadLink(bought.Purchases, 0), err)
	}
	secrets["download link signature"] = link.Query().Get("sig")

	users := e.ctl.Tenancy
	now := time.Now()
	pending, err := users.CreateUser(ctx, acct.ID, "pending@example.com", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secrets["set-password link"] = pending.Token
	owner, err := users.CreateUser(ctx, acct.ID, "owner@example.com", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	const password = "a long enough password"
	if _, err := users.SetPassword(ctx, owner.Token, password, now); err != nil {
		t.Fatal(err)
	}
	sessions := e.nodes[0].g.Sessions
	sess, token, err := sessions.SignIn(ctx, "owner@example.com", password, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sessions.Lookup(ctx, token); err != nil || got.CSRFToken != sess.CSRFToken || got.CSRFToken == "" {
		t.Fatalf("session lookup: %+v %v", got, err)
	}
	secrets["session token"] = token
	secrets["session CSRF token"] = sess.CSRFToken

	for what, where := range map[string][]byte{"pg_dump": pgDump(t, e.cfg.DatabaseURL), "Redis": redisContents(t, e.rdb)} {
		for name, secret := range secrets {
			// The random part alone, too (a key stored without its prefix
			// is still the key), and hex-encoded: pg_dump writes bytea
			// columns in hex.
			random := strings.TrimPrefix(strings.TrimPrefix(secret, "dsk_test_"), "dsk_")
			for _, s := range []string{secret, random, hex.EncodeToString([]byte(random))} {
				if bytes.Contains(where, []byte(s)) {
					t.Errorf("%s holds the %s in plaintext", what, name)
				}
			}
		}
	}
}

// pgDump is a plain-SQL dump of the database at dbURL, by the pg_dump the
// stack installed.
func pgDump(t *testing.T, dbURL string) []byte {
	t.Helper()
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		bin = "/usr/lib/postgresql/15/bin/pg_dump"
		if _, serr := os.Stat(bin); serr != nil {
			t.Fatalf("no pg_dump on PATH nor at %s (deploy/local/stack.sh installs it)", bin)
		}
	}
	out, err := exec.Command(bin, "--no-owner", "--dbname", dbURL).Output()
	if err != nil {
		var stderr []byte
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("pg_dump: %v: %s", err, stderr)
	}
	if !bytes.Contains(out, []byte("idempotency_keys")) {
		t.Fatalf("pg_dump holds no idempotency_keys table: %.200s", out)
	}
	return out
}

// redisContents is every key of the test's Redis database with its value
// read by type (DUMP's format may compress a string, which would hide a
// plaintext secret from a byte search).
func redisContents(t *testing.T, rdb *redis.Client) []byte {
	t.Helper()
	ctx := context.Background()
	var out bytes.Buffer
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	n := 0
	for iter.Next(ctx) {
		key := iter.Val()
		n++
		out.WriteString(key + "\n")
		typ, err := rdb.Type(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		switch typ {
		case "string":
			v, err := rdb.Get(ctx, key).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatal(err)
			}
			vals = []string{v}
		case "set":
			vals, err = rdb.SMembers(ctx, key).Result()
		case "hash":
			var m map[string]string
			m, err = rdb.HGetAll(ctx, key).Result()
			for k, v := range m {
				vals = append(vals, k, v)
			}
		case "list":
			vals, err = rdb.LRange(ctx, key, 0, -1).Result()
		case "zset":
			vals, err = rdb.ZRange(ctx, key, 0, -1).Result()
		case "none":
		default:
			v, derr := rdb.Dump(ctx, key).Result()
			vals, err = []string{v}, derr
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		out.WriteString(strings.Join(vals, "\n") + "\n")
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("dash:session:")) || n == 0 {
		t.Fatalf("Redis holds no session: %.300s", out.Bytes())
	}
	return out.Bytes()
}
