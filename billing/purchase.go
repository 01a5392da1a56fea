package billing

import (
	"context"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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

// insertPurchasesSQL inserts the new purchases; a concurrent purchase of the
// same video by the same key makes the row conflict and vanish from the
// result, so it is never charged twice.
const insertPurchasesSQL = `
	INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier)
	SELECT $1, $2, u.video_id, u.price, u.tier
	FROM unnest($3::uuid[], $4::bigint[], $5::text[]) AS u(video_id, price, tier)
	ON CONFLICT (api_key_id, video_id) DO NOTHING
	RETURNING id, video_id, price_cents, purchased_at`

const insertChargesSQL = `
	INSERT INTO ledger (account_id, amount_cents, kind, purchase_id, api_key_id)
	SELECT $1, -u.price, 'purchase', u.purchase_id, $2
	FROM unnest($3::uuid[], $4::bigint[]) AS u(purchase_id, price)
	WHERE u.price > 0`

// chargeSQL is the only statement that takes the account row lock, and it
// runs last so the lock is held for the shortest time. The balance check and
// the CHECK constraint make a negative balance impossible.
const chargeSQL = `
	UPDATE accounts SET balance_cents = balance_cents - $2
	WHERE id = $1 AND balance_cents >= $2
	RETURNING balance_cents`

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
	var out PurchaseResult
	err = database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		priced, err := priceVideos(ctx, tx, ids)
		if err != nil {
			return err
		}
		owned, err := ownedPurchases(ctx, tx, p.KeyID, ids)
		if err != nil {
			return err
		}
		var newIDs []uuid.UUID
		var prices []int64
		var tiers []string
		var quote money.Cents
		var retired []string
		// Insert in id order so that two requests of one key never wait on
		// each other's rows in opposite orders (no deadlock).
		for _, id := range sortedIDs(ids) {
			if _, ok := owned[id]; ok {
				continue
			}
			v := priced[id]
			if v.retired {
				retired = append(retired, id.String())
				continue
			}
			newIDs, prices, tiers = append(newIDs, id), append(prices, int64(v.price)), append(tiers, v.tier)
			quote += v.price
		}
		if len(retired) > 0 {
			return apperr.NotFoundf("videos not found: %v", retired).With("unknown_video_ids", retired)
		}
		if req.ExpectedTotal != nil && *req.ExpectedTotal != quote {
			return apperr.New(apperr.PriceChanged, "the purchase costs %s USD, not the expected %s USD", quote, *req.ExpectedTotal).
				With("total", quote).With("expected_total", *req.ExpectedTotal).With("currency", "USD")
		}
		if req.DryRun {
			balance, err := currentBalance(ctx, tx, p.AccountID)
			if err != nil {
				return err
			}
			out = quoteResult(ids, owned, priced, quote, balance)
			return nil
		}

		inserted := map[uuid.UUID]PurchasedVideo{}
		var purchaseIDs []uuid.UUID
		var charged []int64
		var total money.Cents
		if len(newIDs) > 0 {
			rows, err := tx.Query(ctx, insertPurchasesSQL, p.AccountID, p.KeyID, newIDs, prices, tiers)
			if err != nil {
				return err
			}
			for rows.Next() {
				var pv PurchasedVideo
				if err := rows.Scan(&pv.PurchaseID, &pv.VideoID, &pv.PricePaid, &pv.PurchasedAt); err != nil {
					rows.Close()
					return err
				}
				inserted[pv.VideoID] = pv
				purchaseIDs, charged = append(purchaseIDs, pv.PurchaseID), append(charged, int64(pv.PricePaid))
				total += pv.PricePaid
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			// Rows that conflicted were bought by this key a moment ago in
			// another request: report them as owned.
			if len(inserted) < len(newIDs) {
				if owned, err = ownedPurchases(ctx, tx, p.KeyID, ids); err != nil {
					return err
				}
			}
		}

		var balance money.Cents
		if total > 0 {
			if _, err := tx.Exec(ctx, insertChargesSQL, p.AccountID, p.KeyID, purchaseIDs, charged); err != nil {
				return err
			}
			err := tx.QueryRow(ctx, chargeSQL, p.AccountID, int64(total)).Scan(&balance)
			if err == pgx.ErrNoRows {
				available, berr := currentBalance(ctx, tx, p.AccountID)
				if berr != nil {
					return berr
				}
				return apperr.New(apperr.InsufficientCredits,
					"the account's credit pool holds %s USD; this purchase needs %s USD", available, total).
					With("required", total).With("available", available).With("currency", "USD")
			}
			if err != nil {
				return err
			}
		} else if balance, err = currentBalance(ctx, tx, p.AccountID); err != nil {
			return err
		}

		out = PurchaseResult{TotalCharged: total, Balance: balance}
		for _, id := range ids {
			if pv, ok := inserted[id]; ok {
				out.Purchases = append(out.Purchases, pv)
				continue
			}
			pv := owned[id]
			pv.AlreadyOwned = true
			out.Purchases = append(out.Purchases, pv)
		}
		return nil
	})
	if err != nil {
		return PurchaseResult{}, err
	}
	if !out.DryRun {
		for i := range out.Purchases {
			out.Purchases[i].Download = s.links.Sign(out.Purchases[i].PurchaseID)
		}
	}
	return out, nil
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

func ownedPurchases(ctx context.Context, tx pgx.Tx, keyID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]PurchasedVideo, error) {
	rows, err := tx.Query(ctx, ownedSQL, keyID, ids)
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
