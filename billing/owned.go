package billing

import (
	"context"

	"github.com/google/uuid"
)

// Owned returns, for the given videos, the purchases the key holds, each with
// a fresh download link: what fills `owned` and `download_url` in the Video
// objects a key sees.
func (s *Service) Owned(ctx context.Context, keyID uuid.UUID, videoIDs []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error) {
	if len(videoIDs) == 0 || keyID == uuid.Nil {
		return map[uuid.UUID]PurchasedVideo{}, nil
	}
	owned, err := ownedPurchases(ctx, s.pool, keyID, videoIDs)
	if err != nil {
		return nil, err
	}
	for id, pv := range owned {
		pv.AlreadyOwned = true
		pv.Download = s.links.Sign(pv.PurchaseID)
		owned[id] = pv
	}
	return owned, nil
}
