package catalog

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/internal/database"
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
//
// A request that came through an admission (the API edge) carries its
// pass (admission.Pass), read in Redis before anything else: the version
// of the catalog, which every write of a clip row here holds across its
// commit and renews after it, and of what its key owns, which every
// purchase by the key does. While both are the ones a node's copies were
// made under, the copies answer with no query at all; a subject being
// changed or changed since sends the read to the primary, which copies
// again. A row written past this package (a hand-made UPDATE) is seen by
// reads without a pass at once, and by the others once any change to the
// catalog moves its version, or after videoCacheTTL.

// VideoForKey returns a clip as keyID sees it: a live clip, or a retired
// one that keyID bought, with keyID's purchase of it (Valid when keyID owns
// the clip). The Video may be shared with other callers: it is read-only.
//
// pass is the request's admission pass (the zero Pass without one): while
// it holds, this node's copies made under it answer with no query at all
// (the catalog's version moves on every change to a clip, what a key owns
// on every purchase by the key). Without it ownership is read from the
// primary on every call and the details are checked against the row's
// version, so a purchase or a change made through any node shows at once
// either way.
func (s *Service) VideoForKey(ctx context.Context, id, keyID uuid.UUID, pass admission.Pass) (Video, uuid.NullUUID, error) {
	now := time.Now()
	seen := versionsOf(pass, keyID)
	if seen.catalog != "" && (seen.owned != "" || keyID == uuid.Nil) {
		if v, live, ok := s.videos.passed(id, seen.catalog, now); ok {
			if bought, ok := s.owned.get(keyID, id, seen.owned, now); ok {
				if !live && !bought.Valid {
					return Video{}, uuid.NullUUID{}, apperr.NotFoundf("video %s not found", id)
				}
				return v, bought, nil
			}
		}
		return s.readVideo(ctx, id, keyID, seen, now)
	}
	args := []any{pgtype.UUID{Bytes: id, Valid: true}, pgtype.UUID{Bytes: keyID, Valid: true}}
	var version uint32
	var bought uuid.NullUUID
	err := s.pool.QueryRow(ctx, sqlVideoVersion, args...).Scan(&version, &bought)
	if err == nil {
		if v, ok := s.videos.get(id, version, now); ok {
			return v, bought, nil
		}
		// Not here, or changed since: read it whole (its own snapshot,
		// purchase and version included, answers this call).
		return s.readVideo(ctx, id, keyID, seen, now)
	}
	return Video{}, uuid.NullUUID{}, videoErr(id, err)
}

// versions are the versions a read may trust copies under, and copies
// under: "" where it may trust none.
type versions struct{ catalog, owned string }

func versionsOf(pass admission.Pass, keyID uuid.UUID) versions {
	var v versions
	v.catalog, _ = pass.Version(admission.Catalog)
	if keyID != uuid.Nil {
		v.owned, _ = pass.Version(admission.Owned(keyID))
	}
	return v
}

// readVideo reads a clip whole as keyID sees it, with its version and the
// key's purchase, and copies both under seen (the versions read before this
// read; "" copies nothing a read with a pass would trust).
func (s *Service) readVideo(ctx context.Context, id, keyID uuid.UUID, seen versions, now time.Time) (Video, uuid.NullUUID, error) {
	args := []any{pgtype.UUID{Bytes: id, Valid: true}, pgtype.UUID{Bytes: keyID, Valid: true}}
	var version uint32
	var bought uuid.NullUUID
	var live bool
	v, err := ScanVideo(s.pool.QueryRow(ctx, sqlVideoForKey, args...), &version, &bought, &live)
	if err != nil {
		return Video{}, uuid.NullUUID{}, videoErr(id, err)
	}
	v.Version = version
	s.videos.put(id, cachedVideo{v: v, version: version, live: live, pass: seen.catalog}, now)
	if seen.owned != "" && keyID != uuid.Nil {
		s.owned.put(keyID, id, bought, seen.owned, now)
	}
	return v, bought, nil
}

func videoErr(id uuid.UUID, err error) error {
	if database.NoRows(err) {
		return apperr.NotFoundf("video %s not found", id)
	}
	return fmt.Errorf("get video: %w", err)
}

const (
	// videoCacheTTL bounds a copy's life: far below the time Postgres takes
	// to reuse a transaction id, and short enough that a clip nobody reads
	// any more leaves memory.
	videoCacheTTL = 10 * time.Minute
	// maxCachedVideos bounds the memory of the cache (a few hundred bytes
	// a clip); past it the cache starts again from empty.
	maxCachedVideos = 50_000
	// maxCachedOwned bounds the copies of who owns what (about 80 bytes
	// each).
	maxCachedOwned = 200_000
)

// videoCache is this node's copy of clip details, each with the version of
// the row it was read from and the catalog's version the request's pass
// gave before the read ("": none).
type videoCache struct {
	mu sync.RWMutex
	m  map[uuid.UUID]cachedVideo
}

type cachedVideo struct {
	v       Video
	version uint32
	// live is false for a retired clip (or one waiting for its probe),
	// which only its buyers see.
	live    bool
	pass    string
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

// passed returns the copy of id made under the catalog's version v, if
// this node has it.
func (c *videoCache) passed(id uuid.UUID, v string, now time.Time) (Video, bool, bool) {
	c.mu.RLock()
	e, ok := c.m[id]
	c.mu.RUnlock()
	if !ok || e.pass != v || !now.Before(e.expires) {
		return Video{}, false, false
	}
	return e.v, e.live, true
}

func (c *videoCache) put(id uuid.UUID, e cachedVideo, now time.Time) {
	e.expires = now.Add(videoCacheTTL)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok && len(c.m) >= maxCachedVideos {
		clear(c.m)
	}
	c.m[id] = e
}

// keep is put for a copy read by a list (ScanListed): a copy already here
// at the same version is left as it is, with the admission pass it was
// made under, which the list's copy (made under none) would lose.
func (c *videoCache) keep(id uuid.UUID, e cachedVideo, now time.Time) {
	c.mu.RLock()
	old, ok := c.m[id]
	c.mu.RUnlock()
	if ok && old.version == e.version && now.Before(old.expires) {
		return
	}
	c.put(id, e, now)
}

// ownedCache is this node's copy of which clips keys own (the purchase,
// or none), under the version of what the key owns.
type ownedCache struct {
	copies *passCopies[keyClip, uuid.NullUUID]
}

type keyClip struct{ key, clip uuid.UUID }

func newOwnedCache() *ownedCache {
	return &ownedCache{copies: newPassCopies[keyClip, uuid.NullUUID](maxCachedOwned, nil)}
}

// get returns key's purchase of clip as copied under version v. No key
// owns nothing, with no copy needed.
func (c *ownedCache) get(key, clip uuid.UUID, v string, now time.Time) (uuid.NullUUID, bool) {
	if key == uuid.Nil {
		return uuid.NullUUID{}, true
	}
	return c.copies.get(keyClip{key, clip}, v, now)
}

func (c *ownedCache) put(key, clip uuid.UUID, bought uuid.NullUUID, v string, now time.Time) {
	c.copies.put(keyClip{key, clip}, bought, v, now)
}
