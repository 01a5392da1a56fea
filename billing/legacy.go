package billing

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/outbox"
	"broll/internal/paging"
)

// LegacyBuyer is who buys through the deprecated v0 API: the account its
// source names and, optionally, one end customer of that platform by email.
// v0 has no keys, so its purchases belong to (account, customer email).
type LegacyBuyer struct {
	AccountID     uuid.UUID
	Source        string // names the account; purchases record the account row's own source
	CustomerEmail string // "" when the platform sent none
}

// MaxCustomerEmailChars keeps a legacy customer email usable as the label
// of the customer key it becomes at migration (labels hold 200 characters).
const MaxCustomerEmailChars = 200

// NormalizeCustomerEmail checks a v0 customer_email and returns the form
// purchases are deduplicated by: trimmed and lower-cased, so that
// "Ann@Example.com" and "ann@example.com" are one customer. "" stays "".
func NormalizeCustomerEmail(raw string) (string, error) {
	email := strings.ToLower(strings.TrimSpace(raw))
	if email == "" {
		return "", nil
	}
	if !database.ValidText(email) {
		return "", apperr.InvalidField("customer_email", "customer_email must be UTF-8 text without NUL characters")
	}
	if utf8.RuneCountInString(email) > MaxCustomerEmailChars {
		return "", apperr.InvalidField("customer_email", "customer_email must be at most %d characters", MaxCustomerEmailChars)
	}
	// A bare address only: "Ann <ann@example.com>" would parse, but it is
	// not what v0 clients send and would make a poor key label.
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return "", apperr.InvalidField("customer_email", "customer_email %q is not an email address", apperr.Clip(raw))
	}
	return email, nil
}

// LegacyPurchase buys videos for a v0 buyer from the account's shared pool
// with the guarantees of Purchase: all or nothing (unknown or retired videos
// are 404 naming them, an insufficient pool is 402, nothing charged in
// either case), and a video the buyer already holds is returned again, not
// charged. Two customer emails of one source are two buyers.
func (s *Service) LegacyPurchase(ctx context.Context, b LegacyBuyer, videoIDs []uuid.UUID) (PurchaseResult, error) {
	ids, err := uniqueIDs(videoIDs, MaxVideosPerPurchase)
	if err != nil {
		return PurchaseResult{}, err
	}
	if b.AccountID == uuid.Nil {
		return PurchaseResult{}, apperr.NotFoundf("unknown source")
	}
	job := newJob(uuid.Nil, b.CustomerEmail, ids, nil, false, false)
	job.trace, job.span = outbox.Trace(ctx), trace.SpanContextFromContext(ctx)
	return s.purchase(b.AccountID, job)
}

// LegacyListParams are the query parameters of GET
// /api/external/broll/purchases (source is resolved by the caller), the
// page read against LegacyListBounds.
type LegacyListParams struct {
	CustomerEmail      string
	StartDate, EndDate string
	Page               paging.Request
}

// LegacyListQuery is a validated legacy purchase listing.
type LegacyListQuery struct {
	CustomerEmail *string
	Start, End    *time.Time // inclusive UTC days
	Limit, Offset int
}

// Parse validates the parameters as the v1 listing validates its own.
func (lp LegacyListParams) Parse() (LegacyListQuery, error) {
	var q LegacyListQuery
	var err error
	if lp.CustomerEmail != "" {
		email, err := NormalizeCustomerEmail(lp.CustomerEmail)
		if err != nil {
			return q, err
		}
		q.CustomerEmail = &email
	}
	if q.Start, q.End, err = parseDays(lp.StartDate, lp.EndDate); err != nil {
		return q, err
	}
	pr, err := LegacyListBounds.Apply(lp.Page)
	q.Limit, q.Offset = pr.Limit, pr.Offset
	return q, err
}

// LegacyPurchases lists an account's v0 purchases, newest first, with a
// summary over every match. The records have the shape of the v1 listing
// (Legacy true, no key), so both APIs render them alike.
func (s *Service) LegacyPurchases(ctx context.Context, accountID uuid.UUID, q LegacyListQuery) (Listing, error) {
	var end *time.Time
	if q.End != nil {
		e := q.End.AddDate(0, 0, 1)
		end = &e
	}
	out := Listing{Query: ListQuery{Start: q.Start, End: q.End, Limit: q.Limit, Offset: q.Offset}}
	if err := s.pool.QueryRow(ctx, legacyListSummarySQL, accountID, q.CustomerEmail, q.Start, end).
		Scan(&out.Total, &out.Amount); err != nil {
		return Listing{}, fmt.Errorf("legacy purchases: %w", err)
	}
	var err error
	out.Purchases, err = database.Select(ctx, s.pool, func(row pgx.CollectableRow) (PurchaseRecord, error) {
		r := PurchaseRecord{Legacy: true}
		err := row.Scan(&r.PurchaseID, &r.VideoID, &r.PricePaid, &r.PurchasedAt, &r.CustomerEmail,
			&r.Video.Title, &r.Video.Emotion, &r.Video.Gender, &r.Video.Difficulty, &r.Video.MediaType,
			&r.Video.DurationSeconds, &r.Video.Retired)
		r.Video.ID = r.VideoID
		r.Download = s.links.Sign(r.PurchaseID)
		return r, err
	}, legacyListPageSQL, accountID, q.CustomerEmail, q.Start, end, q.Limit, q.Offset)
	if err != nil {
		return Listing{}, fmt.Errorf("legacy purchases: %w", err)
	}
	out.HasMore = q.Offset+len(out.Purchases) < out.Total
	return out, nil
}
