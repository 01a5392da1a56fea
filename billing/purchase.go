package billing

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
	"broll/tenancy"
)

// MaxVideosPerPurchase bounds one purchase request.
const MaxVideosPerPurchase = 50

// PurchaseRequest is one call to buy videos with a key.
type PurchaseRequest struct {
	VideoIDs      []uuid.UUID
	ExpectedTotal *money.Cents // if set, the charge must equal it or nothing happens
	DryRun        bool         // quote only
}

// PurchasedVideo is one line of a purchase result.
type PurchasedVideo struct {
	PurchaseID   uuid.UUID
	VideoID      uuid.UUID
	PricePaid    money.Cents
	PurchasedAt  time.Time
	AlreadyOwned bool
	Download     Link // zero on a dry run
}

// PurchaseResult is what a purchase (or its quote) returns.
type PurchaseResult struct {
	Purchases    []PurchasedVideo
	TotalCharged money.Cents
	Balance      money.Cents
	DryRun       bool
}

const priceVideosSQL = `
	SELECT v.id, t.price_cents, v.difficulty, v.retired_at IS NOT NULL
	FROM videos v JOIN tiers t ON t.name = v.difficulty
	WHERE v.id = ANY($1)`

const ownedSQL = `
	SELECT id, video_id, price_cents, purchased_at FROM purchases
	WHERE api_key_id = $1 AND video_id = ANY($2)`

type pricedVideo struct {
	id      uuid.UUID
	price   money.Cents
	tier    string
	retired bool
}

// Purchase buys videos for the calling key from its account's shared pool,
// all or nothing: unknown videos are 404 (naming them), an insufficient pool
// is 402, a wrong expected_total is 409; in each case nothing is charged.
// Videos the key already owns are returned again and not charged.
func (s *Service) Purchase(ctx context.Context, p tenancy.Principal, req PurchaseRequest) (PurchaseResult, error) {
	ids, err := uniqueIDs(req.VideoIDs)
	if err != nil {
		return PurchaseResult{}, err
	}
	if p.AccountID == uuid.Nil {
		return PurchaseResult{}, apperr.New(apperr.Forbidden, "this key belongs to no account")
	}
	if req.DryRun {
		return s.quote(ctx, keyBuyer(p), ids, req.ExpectedTotal)
	}
	var expected *int64
	if req.ExpectedTotal != nil {
		e := int64(*req.ExpectedTotal)
		expected = &e
	}
	var out PurchaseResult
	for attempt := 0; ; attempt++ {
		out, err = s.purchaseOnce(ctx, p, ids, expected)
		if err == nil || attempt == 2 || !database.IsRetryable(err) {
			break
		}
	}
	if err != nil {
		return PurchaseResult{}, s.explainRefusal(ctx, keyBuyer(p), ids, err)
	}
	for i := range out.Purchases {
		out.Purchases[i].Download = s.links.Sign(out.Purchases[i].PurchaseID)
	}
	return out, nil
}

// buyer is whom a purchase is for: a key (v1) or a legacy customer of an
// account (v0). Both share pricing, refusals and results; they differ only in
// what counts as already owned.
type buyer struct {
	account uuid.UUID
	owned   func(ctx context.Context, q tenancy.Querier, ids []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error)
}

func keyBuyer(p tenancy.Principal) buyer {
	return buyer{account: p.AccountID, owned: func(ctx context.Context, q tenancy.Querier, ids []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error) {
		return ownedPurchases(ctx, q, p.KeyID, ids)
	}}
}

func (s *Service) purchaseOnce(ctx context.Context, p tenancy.Principal, ids []uuid.UUID, expected *int64) (PurchaseResult, error) {
	job := &purchaseJob{Key: p.KeyID, IDs: ids, Expected: expected}
	s.batch.do(p.AccountID, job)
	if job.err != nil {
		return PurchaseResult{}, job.err
	}
	got := map[uuid.UUID]PurchasedVideo{}
	var balance *int64
	for _, r := range job.rows {
		if r.balance != nil {
			balance = r.balance
		}
		if r.pv != nil {
			got[r.pv.VideoID] = *r.pv
		}
	}
	return s.result(ctx, keyBuyer(p), ids, got, balance)
}

// result orders what a purchase statement returned by the request's ids.
// Ids it did not return were bought for the same buyer by a concurrent
// request a moment ago: the unique index skipped them, so they are owned,
// not charged.
func (s *Service) result(ctx context.Context, b buyer, ids []uuid.UUID, got map[uuid.UUID]PurchasedVideo, balance *int64) (PurchaseResult, error) {
	if len(got) < len(ids) {
		owned, err := b.owned(ctx, s.pool, ids)
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
	var out PurchaseResult
	var err error
	if balance != nil {
		out.Balance = money.Cents(*balance)
	} else if out.Balance, err = currentBalance(ctx, s.pool, b.account); err != nil {
		return PurchaseResult{}, err
	}
	for _, id := range ids {
		if pv, ok := got[id]; ok {
			out.Purchases = append(out.Purchases, pv)
			if !pv.AlreadyOwned {
				out.TotalCharged += pv.PricePaid
			}
		}
	}
	return out, nil
}

// explainRefusal turns the guards' errors into the client's 404/409/402,
// with the details a client needs (unknown ids, the total, the shortfall).
func (s *Service) explainRefusal(ctx context.Context, b buyer, ids []uuid.UUID, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch {
	case pgErr.Code == "BR404":
		// The quote names the unknown ids (or the retired ones).
		if _, qerr := s.quote(ctx, b, ids, nil); qerr != nil {
			return qerr
		}
		return apperr.NotFoundf("videos not found")
	case pgErr.Code == "BR409":
		total, _ := strconv.ParseInt(pgErr.Detail, 10, 64)
		return apperr.New(apperr.PriceChanged, "the purchase costs %s USD, not the expected total", money.Cents(total)).
			With("total", money.Cents(total)).With("currency", "USD")
	case pgErr.Code == "23514" && pgErr.ConstraintName == "accounts_balance_not_negative":
		q, qerr := s.quote(ctx, b, ids, nil)
		if qerr != nil {
			return qerr
		}
		return apperr.New(apperr.InsufficientCredits,
			"the account's credit pool holds %s USD; this purchase needs %s USD", q.Balance, q.TotalCharged).
			With("required", q.TotalCharged).With("available", q.Balance).With("currency", "USD")
	}
	return err
}

// quote prices a purchase without writing: what dry_run returns, and how
// refusals are explained. Unknown (or retired, not owned) ids are 404.
func (s *Service) quote(ctx context.Context, b buyer, ids []uuid.UUID, expected *money.Cents) (PurchaseResult, error) {
	var out PurchaseResult
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		priced, err := priceVideos(ctx, tx, ids)
		if err != nil {
			return err
		}
		owned, err := b.owned(ctx, tx, ids)
		if err != nil {
			return err
		}
		var quote money.Cents
		var retired []string
		for _, id := range ids {
			if _, ok := owned[id]; ok {
				continue
			}
			if v := priced[id]; v.retired {
				retired = append(retired, id.String())
				continue
			}
			quote += priced[id].price
		}
		if len(retired) > 0 {
			return apperr.NotFoundf("videos not found: %v", retired).With("unknown_video_ids", retired)
		}
		if expected != nil && *expected != quote {
			return apperr.New(apperr.PriceChanged, "the purchase costs %s USD, not the expected %s USD", quote, *expected).
				With("total", quote).With("expected_total", *expected).With("currency", "USD")
		}
		balance, err := currentBalance(ctx, tx, b.account)
		if err != nil {
			return err
		}
		out = quoteResult(ids, owned, priced, quote, balance)
		return nil
	})
	return out, err
}

func quoteResult(ids []uuid.UUID, owned map[uuid.UUID]PurchasedVideo, priced map[uuid.UUID]pricedVideo, quote, balance money.Cents) PurchaseResult {
	out := PurchaseResult{DryRun: true, TotalCharged: quote, Balance: balance}
	for _, id := range ids {
		if pv, ok := owned[id]; ok {
			pv.AlreadyOwned = true
			out.Purchases = append(out.Purchases, pv)
			continue
		}
		out.Purchases = append(out.Purchases, PurchasedVideo{VideoID: id, PricePaid: priced[id].price})
	}
	return out
}

func sortedIDs(ids []uuid.UUID) []uuid.UUID {
	out := append([]uuid.UUID(nil), ids...)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func uniqueIDs(in []uuid.UUID) ([]uuid.UUID, error) {
	if len(in) == 0 {
		return nil, apperr.InvalidField("video_ids", "video_ids must hold 1 to %d video ids", MaxVideosPerPurchase)
	}
	seen := make(map[uuid.UUID]bool, len(in))
	out := make([]uuid.UUID, 0, len(in))
	for _, id := range in {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) > MaxVideosPerPurchase {
		return nil, apperr.InvalidField("video_ids", "at most %d distinct video ids per purchase, got %d", MaxVideosPerPurchase, len(out))
	}
	return out, nil
}

func priceVideos(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) (map[uuid.UUID]pricedVideo, error) {
	rows, err := tx.Query(ctx, priceVideosSQL, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[uuid.UUID]pricedVideo, len(ids))
	for rows.Next() {
		var v pricedVideo
		if err := rows.Scan(&v.id, &v.price, &v.tier, &v.retired); err != nil {
			return nil, err
		}
		out[v.id] = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var unknown []string
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			unknown = append(unknown, id.String())
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, apperr.NotFoundf("videos not found: %v", unknown).With("unknown_video_ids", unknown)
	}
	return out, nil
}

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

func currentBalance(ctx context.Context, q tenancy.Querier, accountID uuid.UUID) (money.Cents, error) {
	var b int64
	err := q.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, accountID).Scan(&b)
	return money.Cents(b), database.Interpret(err, "account not found")
}
