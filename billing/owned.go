package billing

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"broll/catalog"
)

// OwnedLinks turns the purchases by which a key owns clips (read by the
// catalog, whose rule ownership is: catalog.Service.OwnershipsFor) into
// what fills `owned` and `download_url` in the Video objects the key sees,
// each with a fresh download link (none when its licence was revoked: the
// file is no longer delivered); the links are billing's.
func (s *Service) OwnedLinks(owned map[uuid.UUID]catalog.Ownership) map[uuid.UUID]PurchasedVideo {
	out := make(map[uuid.UUID]PurchasedVideo, len(owned))
	for id, o := range owned {
		p := PurchasedVideo{PurchaseID: o.PurchaseID, VideoID: o.VideoID, PricePaid: o.PricePaid,
			PurchasedAt: o.PurchasedAt, AlreadyOwned: true, LicenseRevoked: o.LicenseRevoked}
		if !o.LicenseRevoked {
			p.Download = s.links.Sign(o.PurchaseID)
		}
		out[id] = p
	}
	return out
}

// DownloadLink signs a fresh link to a purchase's file, for a caller that
// already knows the purchase is its own (catalog.Service.VideoForKey
// reports the key's purchase of a clip with the clip): the zero Link when
// its licence was revoked (the file is no longer delivered).
func (s *Service) DownloadLink(ctx context.Context, purchaseID uuid.UUID) (Link, error) {
	var revoked bool
	if err := s.pool.QueryRow(ctx, licenseRevokedSQL, purchaseID).Scan(&revoked); err != nil {
		return Link{}, fmt.Errorf("download link: %w", err)
	}
	if revoked {
		return Link{}, nil
	}
	return s.links.Sign(purchaseID), nil
}
