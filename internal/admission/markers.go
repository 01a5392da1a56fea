package admission

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// The markers every admission reads beside the rate limit: a key's
// revocation marker and its settings marker. Their writers are tenancy's
// (KeyChanges: a revocation, a change of a key's settings), through the
// functions here.

func revokedKey(prefix string, id uuid.UUID) string { return prefix + "revoked:" + id.String() }

func changedKey(prefix string, id uuid.UUID) string { return prefix + "changed:" + id.String() }

// MarkChanged publishes a key's new settings version: a node holding an
// older copy of the key in its auth cache sees the marker in its next
// admission of that key (Decision.Stale) and reads the key again. The
// marker outlives every cache entry by far; a version only grows, so a
// late write of an older version never hides a newer one for long (the
// next change writes again).
func (g *Gate) MarkChanged(ctx context.Context, id uuid.UUID, version int64) error {
	return MarkChanged(ctx, g.rdb, g.prefix, id, version)
}

// MarkChanged is the Gate-free form used by the CLI.
func MarkChanged(ctx context.Context, rdb *redis.Client, prefix string, id uuid.UUID, version int64) error {
	return rdb.Set(ctx, changedKey(prefix, id), strconv.FormatInt(version, 10), 7*24*time.Hour).Err()
}

// MarkRevoked writes revocation markers so that every node refuses the keys
// on their next request, whatever their caches hold (tenancy's KeyChanges
// writes them). Markers outlive every cache entry by far; after they
// expire the database says the same.
func MarkRevoked(ctx context.Context, rdb *redis.Client, prefix string, ids ...uuid.UUID) error {
	pipe := rdb.Pipeline()
	for _, id := range ids {
		pipe.Set(ctx, revokedKey(prefix, id), strconv.FormatInt(time.Now().Unix(), 10), 7*24*time.Hour)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// randomToken is 128 random bits in hex: the epoch an admission offers.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
