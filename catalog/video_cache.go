package catalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"broll/internal/apperr"
)

// A clip's details are read far more often than they change, so each node
// keeps them (videoCache), and every read asks the primary only what must
// be exact: whether the clip may be shown to the key, the key's purchase of
// it, and the version of the row, all in one small query. The version is
// the row's xmin, the id of the transaction that wrote this version of the
// row: Postgres gives every new row version a new one, whoever writes it
// (an import, a retirement, a price or tier change, the media probe, an
// operator's own UPDATE), and it stays the same across row locks (a
// purchase's foreign-key check) and vacuum's freezing. A cached copy is
// used only when its version is the one the primary holds now, so a change
// committed anywhere is seen by the next read on every node, with no
// message to send and nothing to miss when Redis is away. Transaction ids
// wrap around after about four billion transactions; a copy lives
// videoCacheTTL at most, far shorter than that.

// VideoForKey returns a clip as keyID sees it: a live clip, or a retired
// one that keyID bought, with keyID's purchase of it (Valid when keyID owns
// the clip). Ownership is read from the primary on every call, so a
// purchase made through any node shows at once. The Video may be shared
// with other callers: it is read-only.
func (s *Service) VideoForKey(ctx context.Context, id, keyID uuid.UUID) (Video, uuid.NullUUID, error) {
	args := []any{pgtype.UUID{Bytes: id, Valid: true}, pgtype.UUID{Bytes: keyID, Valid: true}}
	var version uint32
	var bought uuid.NullUUID
	err := s.pool.QueryRow(ctx, sqlVideoVersion, args...).Scan(&version, &bought)
	if err == nil {
		if v, ok := s.videos.get(id, version, time.Now()); ok {
			return v, bought, nil
		}
		// Not here, or changed since: read it whole (its own snapshot,
		// purchase and version included, answers this call).
		var v Video
		v, err = ScanVideo(s.pool.QueryRow(ctx, sqlVideoForKey, args...), &version, &bought)
		if err == nil {
			s.videos.put(id, v, version, time.Now())
			return v, bought, nil
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return Video{}, uuid.NullUUID{}, apperr.NotFoundf("video %s not found", id)
	}
	return Video{}, uuid.NullUUID{}, fmt.Errorf("get video: %w", err)
}

const (
	// videoCacheTTL bounds a copy's life: far below the time Postgres takes
	// to reuse a transaction id, and short enough that a clip nobody reads
	// any more leaves memory.
	videoCacheTTL = 10 * time.Minute
	// maxCachedVideos bounds the memory of the cache (a few hundred bytes
	// a clip); past it the cache starts again from empty.
	maxCachedVideos = 50_000
)

// videoCache is this node's copy of clip details, each with the version of
// the row it was read from.
type videoCache struct {
	mu sync.RWMutex
	m  map[uuid.UUID]cachedVideo
}

type cachedVideo struct {
	v       Video
	version uint32
	expires time.Time
}

func newVideoCache() *videoCache { return &videoCache{m: map[uuid.UUID]cachedVideo{}} }

// get returns the copy of id read at version, if this node has it.
func (c *videoCache) get(id uuid.UUID, version uint32, now time.Time) (Video, bool) {
	c.mu.RLock()
	e, ok := c.m[id]
	c.mu.RUnlock()
	if !ok || e.version != version || !now.Before(e.expires) {
		return Video{}, false
	}
	return e.v, true
}

func (c *videoCache) put(id uuid.UUID, v Video, version uint32, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok && len(c.m) >= maxCachedVideos {
		clear(c.m)
	}
	c.m[id] = cachedVideo{v: v, version: version, expires: now.Add(videoCacheTTL)}
}
