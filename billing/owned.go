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
	rows, err := s.pool.Query(ctx, ownedSQL, keyID, videoIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uuid.UUID]PurchasedVideo{}
	for rows.Next() {
		var pv PurchasedVideo
		if err := rows.Scan(&pv.PurchaseID, &pv.VideoID, &pv.PricePaid, &pv.PurchasedAt); err != nil {
			return nil, err
		}
		pv.AlreadyOwned = true
		pv.Download = s.links.Sign(pv.PurchaseID)
		out[pv.VideoID] = pv
	}
	return out, rows.Err()
}
