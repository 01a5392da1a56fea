package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"broll/internal/database"
	"broll/internal/money"
)

// Who owns a clip is the SQL function broll_owned_purchase
// (migrations/functions/owned.sql), which the purchase statement reads too:
// a key owns a clip once it bought it (live or test) and keeps it whatever
// becomes of the clip. Search's owned filter, clip details (a retired clip
// stays visible to its buyers) and the owned and download_url of every clip
// billing renders (REST and MCP alike) all read ownership through this
// file and owned_sets.go; purchases write it (billing), and the catalog never imports
// billing.

// ownership is the purchases p by which the key key owns the clip video,
// for a FROM: key and video are placeholders or columns.
func ownership(key, video string) string {
	return "broll_owned_purchase(" + key + ", " + video + ") p"
}

// OwnsSQL is the condition "the key key owns the clip video" (say
// OwnsSQL("$2", "v.id")), for a statement that filters or shows clips by
// ownership. Its NOT is "does not own".
func OwnsSQL(key, video string) string {
	return "EXISTS (SELECT 1 FROM " + ownership(key, video) + ")"
}

// OwnershipSQL is the purchase p (a purchases row) by which the key key
// owns the clip video, for a FROM or a LATERAL join: no row when it does
// not own it, one when it does.
func OwnershipSQL(key, video string) string { return ownership(key, video) }

// Ownership is a clip a key owns and the purchase that makes it so.
type Ownership struct {
	PurchaseID  uuid.UUID   `db:"purchase_id"`
	VideoID     uuid.UUID   `db:"video_id"`
	PricePaid   money.Cents `db:"price_paid"`
	PurchasedAt time.Time   `db:"purchased_at"`
	// LicenseRevoked: the purchase's licence was revoked; the clip stays
	// owned, its file is no longer delivered.
	LicenseRevoked bool `db:"license_revoked"`
}

// Ownerships returns, by clip, those of videoIDs that keyID owns, read on
// q: give it the primary, where the key's purchases are made, so that a
// clip bought a moment ago is owned. No key (uuid.Nil) owns nothing.
func Ownerships(ctx context.Context, q database.Queryer, keyID uuid.UUID, videoIDs []uuid.UUID) (map[uuid.UUID]Ownership, error) {
	out := map[uuid.UUID]Ownership{}
	if len(videoIDs) == 0 || keyID == uuid.Nil {
		return out, nil
	}
	// As pgtype.UUIDs, which pgx writes as they are; a uuid.UUID goes
	// through its text form (driver.Valuer), a good share of a page's CPU.
	ids := make([]pgtype.UUID, len(videoIDs))
	for i, id := range videoIDs {
		ids[i] = pgtype.UUID{Bytes: id, Valid: true}
	}
	owned, err := database.Select(ctx, q, pgx.RowToStructByName[Ownership], sqlOwnerships,
		pgtype.UUID{Bytes: keyID, Valid: true}, ids)
	if err != nil {
		return nil, fmt.Errorf("ownerships: %w", err)
	}
	for _, o := range owned {
		out[o.VideoID] = o
	}
	return out, nil
}
