package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"broll/internal/admission"
	"broll/internal/database"
)

// A page of clips shows, for each, whether the calling key owns it. Most
// keys own few clips, and most pages none of them, so each node keeps the
// set of clips a key owns (ownedSets), under the version of what the key
// owns that the request's pass gave before it was read: every purchase by
// the key holds that subject across its commit and renews it after
// (billing's batcher), so a set made under the version a pass still gives
// is the set the primary holds. A page with none of the set's clips needs
// no query; one with some reads their purchases (licence state included,
// which changes without a purchase) from the primary as before, for those
// clips alone. A request without a pass (no Redis) reads every page's
// ownership from the primary.

// maxOwnedSet is the most clips a key's set is kept with; a key that owns
// more has each page's ownership read from the primary.
const maxOwnedSet = 1_000

// maxOwnedSetClips bounds the memory of all keys' sets together (about 50
// bytes a clip); past it they start again from empty.
const maxOwnedSetClips = 200_000

// ownedSets is this node's copy of the clips each key owns, weighed by
// their number.
type ownedSets = passCopies[uuid.UUID, ownedSet]

type ownedSet struct {
	// clips is nil for a key that owns more than maxOwnedSet clips.
	clips map[uuid.UUID]struct{}
	large bool
}

func newOwnedSets() *ownedSets {
	return newPassCopies[uuid.UUID, ownedSet](maxOwnedSetClips, func(s ownedSet) int { return len(s.clips) + 1 })
}

// OwnershipsFor returns, by clip, those of videoIDs that keyID owns, as
// Ownerships does, read from the primary; pass is the request's admission
// pass (the zero Pass without one), under which this node's copy of the
// clips keyID owns decides which of videoIDs need reading at all.
func (s *Service) OwnershipsFor(ctx context.Context, keyID uuid.UUID, videoIDs []uuid.UUID, pass admission.Pass) (map[uuid.UUID]Ownership, error) {
	seen := versionsOf(pass, keyID)
	if seen.owned == "" || len(videoIDs) == 0 {
		return Ownerships(ctx, s.pool, keyID, videoIDs)
	}
	now := time.Now()
	set, ok := s.ownedSets.get(keyID, seen.owned, now)
	if !ok {
		var err error
		if set, err = s.readOwnedSet(ctx, keyID); err != nil {
			return nil, err
		}
		s.ownedSets.put(keyID, set, seen.owned, now)
	}
	if set.large {
		return Ownerships(ctx, s.pool, keyID, videoIDs)
	}
	var some []uuid.UUID
	for _, id := range videoIDs {
		if _, ok := set.clips[id]; ok {
			some = append(some, id)
		}
	}
	return Ownerships(ctx, s.pool, keyID, some)
}

// readOwnedSet reads the clips keyID owns from the primary.
func (s *Service) readOwnedSet(ctx context.Context, keyID uuid.UUID) (ownedSet, error) {
	ids, err := database.Select(ctx, s.pool, pgx.RowTo[pgtype.UUID], sqlOwnedClips,
		pgtype.UUID{Bytes: keyID, Valid: true}, maxOwnedSet+1)
	if err != nil {
		return ownedSet{}, fmt.Errorf("owned clips: %w", err)
	}
	if len(ids) > maxOwnedSet {
		return ownedSet{large: true}, nil
	}
	set := ownedSet{clips: make(map[uuid.UUID]struct{}, len(ids))}
	for _, id := range ids {
		set.clips[id.Bytes] = struct{}{}
	}
	return set, nil
}
