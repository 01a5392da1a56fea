package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Keyspace is a test's own part of the test Redis: REDIS_URL's database,
// shared with every other test, and a key prefix no other test has. A
// service configured with Prefix as BROLL_REDIS_PREFIX writes every key
// under it (its asynq queues included, see tasks.EmbedQueue), so tests on
// one database never see each other's keys and none needs a database of
// its own or a FLUSHDB, which would wipe the keys of tests running beside it.
type Keyspace struct {
	// Client is a client on URL's database, closed when the test ends.
	Client *redis.Client
	// URL is the test Redis (REDIS_URL).
	URL string
	// Prefix is the test's BROLL_REDIS_PREFIX.
	Prefix string
}

// Redis returns the test's keyspace. Its keys are deleted when the test
// ends (after the cleanups registered later, such as stopping a worker).
func Redis(t testing.TB) Keyspace {
	t.Helper()
	url := RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("parse REDIS_URL: %v", err)
	}
	client := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		t.Fatalf("redis (is the stack up? `deploy/local/stack.sh up`): %v", err)
	}
	ks := Keyspace{Client: client, URL: url, Prefix: "test:" + randomHex(8) + ":"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ks.Delete(ctx); err != nil {
			t.Logf("delete the test's redis keys: %v", err)
		}
		_ = client.Close()
	})
	return ks
}

// Keys lists the keys under the prefix, the service's own and its asynq
// queues' ("asynq:{<prefix>embed}:...").
func (k Keyspace) Keys(ctx context.Context) ([]string, error) {
	var out []string
	for _, match := range []string{k.Prefix + "*", "asynq:{" + k.Prefix + "*"} {
		iter := k.Client.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			out = append(out, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Delete removes the keyspace's keys, and its queue names from asynq's set
// of queues, leaving every other key of the database alone.
func (k Keyspace) Delete(ctx context.Context) error {
	keys, err := k.Keys(ctx)
	if err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := k.Client.Del(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	queues, err := k.Client.SMembers(ctx, "asynq:queues").Result()
	if err != nil {
		return err
	}
	for _, q := range queues {
		if strings.HasPrefix(q, k.Prefix) {
			if err := k.Client.SRem(ctx, "asynq:queues", q).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}
