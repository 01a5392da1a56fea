package billing

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/database"
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

// ownedPurchases reads the purchases key keyID holds of the videos ids,
// by video.
func ownedPurchases(ctx context.Context, q tenancy.Querier, keyID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error) {
	list, err := database.Select(ctx, q, pgx.RowToStructByNameLax[PurchasedVideo], ownedSQL, keyID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]PurchasedVideo, len(list))
	for _, pv := range list {
		out[pv.VideoID] = pv
	}
	return out, nil
}
