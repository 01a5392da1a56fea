package billing

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/tenancy"
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

// DownloadLink signs a fresh link to a purchase's file, for a caller that
// already knows the purchase is its own (catalog.Service.VideoForKey
// reports the key's purchase of a clip with the clip).
func (s *Service) DownloadLink(purchaseID uuid.UUID) Link { return s.links.Sign(purchaseID) }

const ownedSQL = `
	SELECT id, video_id, price_cents, purchased_at FROM purchases
	WHERE api_key_id = $1 AND video_id = ANY($2)`

func ownedPurchases(ctx context.Context, q tenancy.Querier, keyID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error) {
	return collectPurchased(q.Query(ctx, ownedSQL, keyID, ids))
}

// collectPurchased reads (id, video_id, price_cents, purchased_at) rows into
// purchases by video.
func collectPurchased(rows pgx.Rows, err error) (map[uuid.UUID]PurchasedVideo, error) {
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
		out[pv.VideoID] = pv
	}
	return out, rows.Err()
}
