package billing

import (
	"context"
	"errors"
	"net/netip"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
)

// Download is what a verified link may fetch.
type Download struct {
	PurchaseID  uuid.UUID
	AccountID   uuid.UUID
	KeyID       uuid.NullUUID
	VideoID     uuid.UUID
	Title       string
	MediaKey    string
	ContentType string
}

// authorizeSQL refuses purchases whose key, or whose key's root, is revoked:
// a revoked key's links stop working with it.
const authorizeSQL = `
	SELECT p.id, p.account_id, p.api_key_id, v.id, v.title, v.media_key, v.media_content_type
	FROM purchases p
	JOIN videos v ON v.id = p.video_id
	` + keyJoinSQL + `
	WHERE p.id = $1 AND NOT ` + keyRevokedSQL

// Verify checks a download link and returns what it may fetch.
func (s *Service) Verify(ctx context.Context, purchaseID, exp, version, sig string) (Download, error) {
	id, err := s.links.Verify(purchaseID, exp, version, sig)
	if err != nil {
		return Download{}, err
	}
	var d Download
	err = s.pool.QueryRow(ctx, authorizeSQL, id).
		Scan(&d.PurchaseID, &d.AccountID, &d.KeyID, &d.VideoID, &d.Title, &d.MediaKey, &d.ContentType)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return Download{}, apperr.New(apperr.Forbidden, "this download link no longer works")
		}
		return Download{}, err
	}
	return d, nil
}

// DownloadEvent is one fetch of a full-quality file, for the audit.
type DownloadEvent struct {
	Download   Download
	ClientAddr string
	UserAgent  string
	BytesSent  int64
	Status     int
}

// LogDownload records a fetch in the download log.
func (s *Service) LogDownload(ctx context.Context, e DownloadEvent) error {
	var addr *netip.Addr
	if a, err := netip.ParseAddr(e.ClientAddr); err == nil {
		addr = &a
	}
	ua := e.UserAgent
	if len(ua) > 512 {
		ua = ua[:512]
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO download_log (purchase_id, account_id, api_key_id, client_addr, user_agent, bytes_sent, status)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.Download.PurchaseID, e.Download.AccountID, e.Download.KeyID, addr, ua, e.BytesSent, e.Status)
	return err
}
