package billing

import (
	"slices"
	"time"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/money"
)

// verdict is what broll_purchase_batch decided for one purchase
// (migrations/functions/purchase_batch.sql defines each).
type verdict string

const (
	verdictBought       verdict = "bought"
	verdictOwned        verdict = "owned"
	verdictQuoted       verdict = "quoted"
	verdictUnknown      verdict = "unknown"
	verdictPriceChanged verdict = "price_changed"
	verdictInsufficient verdict = "insufficient_credits"
	verdictSpendLimit   verdict = "spend_limit_exceeded"
)

// outcome is one purchase's share of a batch: its verdict and its lines.
type outcome struct {
	verdict   verdict
	quote     money.Cents
	available money.Cents                  // the pool at this purchase's turn
	balance   money.Cents                  // the pool after the batch
	lines     map[uuid.UUID]PurchasedVideo // by video; PricePaid is the quote when not bought
	unknown   []string
	limit     spendLimit // the buying key's, when it has one
}

// spendLimit is a key's limit as the batch saw it under the account lock.
type spendLimit struct {
	limit    *int64
	period   *string
	spent    *int64
	resetsAt *time.Time // nil for a 'total' limit
}

// answer turns a job's outcome into the client's result or refusal. A line
// is charged to this job exactly when its purchase carries one of the ids
// the job chose (newIDs): so a batch that committed but whose answer was
// lost with its connection is recognised as bought when it runs again.
func (j *purchaseJob) answer() (PurchaseResult, error) {
	o := j.out
	out := PurchaseResult{Balance: o.balance, DryRun: j.dry, Livemode: !j.test}
	// A scan of newIDs is as quick as a set at MaxVideosPerPurchase. An
	// id derived from an Idempotency-Key (retryKey) counts only within
	// RetryWindow: an older purchase under it was a request whose key has
	// expired since, and this one is a new request.
	now := time.Now()
	mine := func(pv PurchasedVideo) bool {
		if pv.PurchaseID == uuid.Nil || !slices.Contains(j.newIDs, pv.PurchaseID) {
			return false
		}
		return j.retryKey == "" || now.Sub(pv.PurchasedAt) < RetryWindow
	}
	bought := false
	for _, id := range j.ids {
		if pv, ok := o.lines[id]; ok && mine(pv) {
			bought = true
		}
	}
	if !bought {
		if err := o.refusal(j.expected); err != nil {
			return PurchaseResult{}, err
		}
	}
	for _, id := range j.ids {
		pv := o.lines[id]
		pv.VideoID = id
		switch {
		case j.dry:
			pv.AlreadyOwned = pv.PurchaseID != uuid.Nil
			if !pv.AlreadyOwned {
				out.TotalCharged += pv.PricePaid
			}
		case mine(pv):
			out.TotalCharged += pv.PricePaid
		default:
			pv.AlreadyOwned = true
		}
		out.Purchases = append(out.Purchases, pv)
	}
	return out, nil
}

// refusal is the client error a refusing verdict stands for, with the
// numbers the batch itself computed; nil for verdicts that are answers.
func (o outcome) refusal(expected *int64) error {
	switch o.verdict {
	case verdictBought, verdictOwned, verdictQuoted:
		return nil
	case verdictUnknown:
		slices.Sort(o.unknown)
		return apperr.NotFoundf("videos not found: %v", o.unknown).With("unknown_video_ids", o.unknown)
	case verdictPriceChanged:
		want := money.Cents(deref(expected))
		return apperr.New(apperr.PriceChanged, "the purchase costs %s USD, not the expected %s USD", o.quote, want).
			With("total", o.quote).With("expected_total", want).With("currency", "USD")
	case verdictInsufficient:
		return apperr.New(apperr.InsufficientCredits,
			"the account's balance holds %s USD; this purchase needs %s USD", o.available, o.quote).
			With("required", o.quote).With("available", o.available).With("currency", "USD")
	case verdictSpendLimit:
		return o.limit.refusal(o.quote)
	}
	return apperr.New(apperr.Internal, "unexpected purchase verdict")
}

// refusal is the 402 of a purchase that would take the key past its limit,
// with the numbers the batch read under the account lock.
func (l spendLimit) refusal(required money.Cents) error {
	limit, spent, period := money.Cents(deref(l.limit)), money.Cents(deref(l.spent)), deref(l.period)
	var resets any // JSON null for a 'total' limit, which never resets
	if l.resetsAt != nil {
		resets = l.resetsAt.UTC()
	}
	return apperr.New(apperr.SpendLimitExceeded,
		"this key has spent %s of its %s USD %s limit; this purchase needs %s USD", spent, limit, period, required).
		With("limit", limit).With("spent", spent).With("required", required).
		With("period", period).With("period_resets_at", resets).With("currency", "USD")
}

// deref is *p, or the zero value for nil: a NULL of the batch statement.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
