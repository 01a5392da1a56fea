package billing

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
	"broll/tenancy"
)

// LegacyBuyer is who buys through the deprecated v0 API: the account its
// source names and, optionally, one end customer of that platform by email.
// v0 has no keys, so its purchases belong to (account, customer email).
type LegacyBuyer struct {
	AccountID     uuid.UUID
	Source        string
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
	if utf8.RuneCountInString(email) > MaxCustomerEmailChars {
		return "", apperr.InvalidField("customer_email", "customer_email must be at most %d characters", MaxCustomerEmailChars)
	}
	// A bare address only: "Ann <ann@example.com>" would parse, but it is
	// not what v0 clients send and would make a poor key label.
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return "", apperr.InvalidField("customer_email", "customer_email %q is not an email address", raw)
	}
	return email, nil
}

// LegacyPurchase buys videos for a v0 buyer from the account's shared pool
// with the guarantees of Purchase: all or nothing (unknown or retired videos
// are 404 naming them, an insufficient pool is 402, nothing charged in
// either case), and a video the buyer already holds is returned again, not
// charged. Two customer emails of one source are two buyers.
func (s *Service) LegacyPurchase(ctx context.Context, b LegacyBuyer, videoIDs []uuid.UUID) (PurchaseResult, error) {
	ids, err := uniqueIDs(videoIDs)
	if err != nil {
		return PurchaseResult{}, err
	}
	if b.AccountID == uuid.Nil {
		return PurchaseResult{}, apperr.NotFoundf("unknown source")
	}
	var out PurchaseResult
	for attempt := 0; ; attempt++ {
		out, err = s.legacyPurchaseOnce(ctx, b, ids)
		if err == nil || attempt == 2 || !database.IsRetryable(err) {
			break
		}
	}
	if err != nil {
		return PurchaseResult{}, s.explainLegacyRefusal(ctx, b, ids, err)
	}
	for i := range out.Purchases {
		out.Purchases[i].Download = s.links.Sign(out.Purchases[i].PurchaseID)
	}
	return out, nil
}

func (s *Service) legacyPurchaseOnce(ctx context.Context, b LegacyBuyer, ids []uuid.UUID) (PurchaseResult, error) {
	rows, err := s.pool.Query(ctx, legacyPurchaseSQL, b.AccountID, b.Source, b.CustomerEmail, ids)
	if err != nil {
		return PurchaseResult{}, err
	}
	defer rows.Close()
	got := map[uuid.UUID]PurchasedVideo{}
	var out PurchaseResult
	var balance *int64
	for rows.Next() {
		var quote int64
		var id, videoID *uuid.UUID
		var price *int64
		var at *time.Time
		var owned *bool
		if err := rows.Scan(&quote, &balance, &id, &videoID, &price, &at, &owned); err != nil {
			return PurchaseResult{}, err
		}
		if id == nil {
			continue
		}
		pv := PurchasedVideo{PurchaseID: *id, VideoID: *videoID, PricePaid: money.Cents(*price), PurchasedAt: *at, AlreadyOwned: *owned}
		got[pv.VideoID] = pv
		if !pv.AlreadyOwned {
			out.TotalCharged += pv.PricePaid
		}
	}
	if err := rows.Err(); err != nil {
		return PurchaseResult{}, err
	}
	rows.Close()
	if len(got) < len(ids) {
		// Bought for the same customer by a concurrent request a moment
		// ago: the unique index skipped it, so it is owned, not charged.
		owned, err := legacyOwned(ctx, s.pool, b, ids)
		if err != nil {
			return PurchaseResult{}, err
		}
		for id, pv := range owned {
			if _, ok := got[id]; !ok {
				pv.AlreadyOwned = true
				got[id] = pv
			}
		}
	}
	if balance != nil {
		out.Balance = money.Cents(*balance)
	} else if out.Balance, err = currentBalance(ctx, s.pool, b.AccountID); err != nil {
		return PurchaseResult{}, err
	}
	for _, id := range ids {
		if pv, ok := got[id]; ok {
			out.Purchases = append(out.Purchases, pv)
		}
	}
	return out, nil
}

// explainLegacyRefusal turns the guard's and the CHECK's errors into the
// client's 404 (naming the ids) and 402 (with required and available).
func (s *Service) explainLegacyRefusal(ctx context.Context, b LegacyBuyer, ids []uuid.UUID, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch {
	case pgErr.Code == "BR404":
		if _, qerr := s.legacyQuote(ctx, b, ids); qerr != nil {
			return qerr
		}
		return apperr.NotFoundf("videos not found")
	case pgErr.Code == "23514" && pgErr.ConstraintName == "accounts_balance_not_negative":
		q, qerr := s.legacyQuote(ctx, b, ids)
		if qerr != nil {
			return qerr
		}
		return apperr.New(apperr.InsufficientCredits,
			"the account's credit pool holds %s USD; this purchase needs %s USD", q.Balance, q.TotalCharged).
			With("required", q.TotalCharged).With("available", q.Balance).With("currency", "USD")
	}
	return err
}

// legacyQuote prices a v0 purchase without writing, to explain a refusal.
func (s *Service) legacyQuote(ctx context.Context, b LegacyBuyer, ids []uuid.UUID) (PurchaseResult, error) {
	var out PurchaseResult
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		priced, err := priceVideos(ctx, tx, ids)
		if err != nil {
			return err
		}
		owned, err := legacyOwned(ctx, tx, b, ids)
		if err != nil {
			return err
		}
		var quote money.Cents
		var retired []string
		for _, id := range ids {
			if _, ok := owned[id]; ok {
				continue
			}
			if priced[id].retired {
				retired = append(retired, id.String())
				continue
			}
			quote += priced[id].price
		}
		if len(retired) > 0 {
			return apperr.NotFoundf("videos not found: %v", retired).With("unknown_video_ids", retired)
		}
		balance, err := currentBalance(ctx, tx, b.AccountID)
		if err != nil {
			return err
		}
		out = quoteResult(ids, owned, priced, quote, balance)
		return nil
	})
	return out, err
}

func legacyOwned(ctx context.Context, q tenancy.Querier, b LegacyBuyer, ids []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error) {
	rows, err := q.Query(ctx, legacyOwnedSQL, b.AccountID, b.CustomerEmail, ids)
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

// LegacyListParams are the raw query parameters of GET
// /api/external/broll/purchases (source is resolved by the caller).
type LegacyListParams struct {
	CustomerEmail       string
	StartDate, EndDate  string
	Limit, Page, Offset string
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
	if q.Start, err = parseDay("start_date", lp.StartDate); err != nil {
		return q, err
	}
	if q.End, err = parseDay("end_date", lp.EndDate); err != nil {
		return q, err
	}
	if q.Start != nil && q.End != nil && q.Start.After(*q.End) {
		return q, apperr.InvalidField("start_date", "start_date %s is after end_date %s", lp.StartDate, lp.EndDate)
	}
	q.Limit, q.Offset, err = parsePaging(lp.Limit, lp.Page, lp.Offset, defaultListLimit, maxListLimit)
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
	var amount int64
	if err := s.pool.QueryRow(ctx, legacyListSummarySQL, accountID, q.CustomerEmail, q.Start, end).
		Scan(&out.Total, &amount); err != nil {
		return Listing{}, fmt.Errorf("legacy purchases: %w", err)
	}
	out.Amount = money.Cents(amount)
	rows, err := s.pool.Query(ctx, legacyListPageSQL, accountID, q.CustomerEmail, q.Start, end, q.Limit, q.Offset)
	if err != nil {
		return Listing{}, fmt.Errorf("legacy purchases: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r := PurchaseRecord{Legacy: true}
		if err := rows.Scan(&r.PurchaseID, &r.VideoID, &r.PricePaid, &r.PurchasedAt, &r.CustomerEmail,
			&r.Video.Title, &r.Video.Emotion, &r.Video.Gender, &r.Video.Difficulty, &r.Video.MediaType,
			&r.Video.DurationSeconds, &r.Video.Retired); err != nil {
			return Listing{}, fmt.Errorf("legacy purchases: %w", err)
		}
		r.Video.ID = r.VideoID
		r.Download = s.links.Sign(r.PurchaseID)
		out.Purchases = append(out.Purchases, r)
	}
	if err := rows.Err(); err != nil {
		return Listing{}, fmt.Errorf("legacy purchases: %w", err)
	}
	return out, nil
}
