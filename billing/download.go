package billing

import (
	"context"
	"net/netip"

	"github.com/google/uuid"

	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/internal/database"
)

// Download is what a verified link may fetch.
type Download struct {
	PurchaseID  uuid.UUID
	AccountID   uuid.UUID
	KeyID       uuid.NullUUID
	VideoID     uuid.UUID
	Title       string
	MediaKey    string // what the link serves: the preview's for a test purchase
	ContentType string
	Livemode    bool
	// Original is the clip's full-quality file when MediaKey is its
	// stamped copy (license.Stamper), "" otherwise: a stamped copy that
	// cannot be read is never a failed download, the original is served.
	Original string
}

// VerifyLink checks a link's signature and expiry only (no database): the
// purchase it names, once the link is known to be genuine.
func (s *Service) VerifyLink(purchaseID, exp, version, sig string) (uuid.UUID, error) {
	return s.links.Verify(purchaseID, exp, version, sig)
}

// Authorize returns what a verified link of purchase id may fetch, unless
// the purchase's key (or its root) was revoked since (forbidden) or its
// licence was (license_revoked: a revoked licence's file is no longer
// delivered, and its stamped copy is removed). A test purchase paid
// nothing real, so its link fetches the clip's preview, never the
// full-quality file; a clip without a preview yet is preview_not_ready. A
// live purchase fetches its stamped copy (the licence in the file's
// metadata) once the worker made it, and the original until then, asking
// for the copy as it goes.
func (s *Service) Authorize(ctx context.Context, id uuid.UUID) (Download, error) {
	var d Download
	var preview *string
	var stamped string
	var recorded, licenseRevoked bool
	var licenseID string
	err := s.pool.QueryRow(ctx, authorizeSQL, id).
		Scan(&d.PurchaseID, &d.AccountID, &d.KeyID, &d.VideoID, &d.Title, &d.MediaKey, &d.ContentType, &d.Livemode, &preview,
			&stamped, &recorded, &licenseID, &licenseRevoked)
	if err != nil {
		if database.NoRows(err) {
			return Download{}, apperr.New(apperr.Forbidden, "this download link no longer works")
		}
		return Download{}, err
	}
	if licenseRevoked {
		return Download{}, apperr.New(apperr.LicenseRevoked,
			"this purchase's licence %s was revoked: its file is no longer delivered", licenseID)
	}
	if d.Livemode {
		switch {
		case stamped != "":
			d.Original, d.MediaKey = d.MediaKey, stamped
		case !recorded:
			// Not stamped yet: the original now, the copy for next time.
			s.stamps.Request(ctx, d.PurchaseID)
		}
	} else {
		if preview == nil || *preview == "" {
			return Download{}, apperr.New(apperr.PreviewNotReady,
				"this test-mode purchase serves the clip's preview, which is not ready yet; retry later")
		}
		d.MediaKey, d.ContentType = *preview, media.ContentType(*preview)
	}
	return d, nil
}

// RestampMissing asks again for purchase id's stamped copy, which a
// download found recorded but could not read (pruned or lost meanwhile):
// that download serves the original.
func (s *Service) RestampMissing(ctx context.Context, id uuid.UUID) { s.stamps.Request(ctx, id) }

// DownloadEvent is one fetch of a full-quality file, for the audit.
type DownloadEvent struct {
	Download   Download
	ClientAddr string
	UserAgent  string
	BytesSent  int64
	Status     int
}

// LogDownload records a fetch in the download log as it starts and returns
// the entry's id, for FinishDownload.
func (s *Service) LogDownload(ctx context.Context, e DownloadEvent) (int64, error) {
	var addr *netip.Addr
	if a, err := netip.ParseAddr(e.ClientAddr); err == nil {
		addr = &a
	}
	ua := e.UserAgent
	if len(ua) > 512 {
		ua = ua[:512]
	}
	var id int64
	err := s.pool.QueryRow(ctx, logDownloadSQL, e.Download.PurchaseID, e.Download.AccountID, e.Download.KeyID, addr, ua, e.BytesSent, e.Status).Scan(&id)
	return id, err
}

// FinishDownload records how many bytes of a logged fetch actually went
// out, once its stream ended (complete or broken off).
func (s *Service) FinishDownload(ctx context.Context, id, delivered int64) error {
	_, err := s.pool.Exec(ctx, finishDownloadSQL, id, delivered)
	return err
}
