package billing

import (
	"context"

	"github.com/google/uuid"

	"broll/catalog"
)

// Owned returns, for the given videos, the purchases the key holds, each with
// a fresh download link: what fills `owned` and `download_url` in the Video
// objects a key sees. Who owns what is the catalog's rule (catalog.Ownerships);
// the links are billing's.
func (s *Service) Owned(ctx context.Context, keyID uuid.UUID, videoIDs []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error) {
	owned, err := catalog.Ownerships(ctx, s.pool, keyID, videoIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]PurchasedVideo, len(owned))
	for id, o := range owned {
		out[id] = PurchasedVideo{PurchaseID: o.PurchaseID, VideoID: o.VideoID, PricePaid: o.PricePaid,
			PurchasedAt: o.PurchasedAt, AlreadyOwned: true, Download: s.links.Sign(o.PurchaseID)}
	}
	return out, nil
}

// DownloadLink signs a fresh link to a purchase's file, for a caller that
// already knows the purchase is its own (catalog.Service.VideoForKey
// reports the key's purchase of a clip with the clip).
func (s *Service) DownloadLink(purchaseID uuid.UUID) Link { return s.links.Sign(purchaseID) }
