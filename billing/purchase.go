package billing

import (
	"context"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/idempotency"
	"broll/internal/money"
	"broll/internal/outbox"
	"broll/tenancy"
)

// MaxVideosPerPurchase bounds one purchase request.
const MaxVideosPerPurchase = 50

// MaxVideosPerBulkPurchase bounds a bulk purchase: the clips of a list the
// service holds for the key (a collection, at most 5,000 clips), which the
// caller has already narrowed to those to buy.
const MaxVideosPerBulkPurchase = 5000

// PurchaseRequest is one call to buy videos with a key.
type PurchaseRequest struct {
	VideoIDs      []uuid.UUID
	ExpectedTotal *money.Cents // if set, the charge must equal it or nothing happens
	DryRun        bool         // quote only
	// Bulk: VideoIDs come from a list the service keeps (a collection), not
	// from the client; up to MaxVideosPerBulkPurchase, and none at all is
	// an empty purchase (nothing charged, the balance shown) rather than a
	// bad request.
	Bulk bool
	// RetryKey is the client's Idempotency-Key, when the request has one.
	// Each line's purchase id is then derived from it (RetryPurchaseID),
	// so the same request run again after an answer the client never got
	// (a 503 "could not be confirmed", a dropped connection) finds the
	// purchases it made and answers them as bought, with their charge, as
	// the first run would have; without it they come back already owned.
	// It is not part of the request's fingerprint.
	RetryKey string `json:"-"`
}

// RetryWindow is how long a purchase id derived from an Idempotency-Key
// stands for the request that made it: a minute short of how long the
// key is kept (idempotency.TTL), past which the same key names a new
// request, which must see the clip as already owned, not bought by it.
const RetryWindow = idempotency.TTL - time.Minute

// BoughtByRetry says whether the purchase id (made at purchasedAt) by
// which key owns video was made by an earlier run of the request whose
// Idempotency-Key is retryKey, as seen at now.
func BoughtByRetry(key uuid.UUID, retryKey string, video, id uuid.UUID, purchasedAt, now time.Time) bool {
	return retryKey != "" && id == RetryPurchaseID(key, retryKey, video) && now.Sub(purchasedAt) < RetryWindow
}

// retrySpace is the namespace of the purchase ids RetryPurchaseID derives.
var retrySpace = uuid.MustParse("6f0d2a0e-4c1b-5e8a-9b7d-3c2f1e0a9b84")

// RetryPurchaseID is the purchase id of video bought by key in the request
// whose Idempotency-Key is retryKey: a name-based (SHA-1) UUID of the three,
// so it is the same in every run of that request and differs for every
// other key, request and clip. A clip a key owns has one purchases row, so
// a derived id already taken is always this key's purchase of this clip.
func RetryPurchaseID(key uuid.UUID, retryKey string, video uuid.UUID) uuid.UUID {
	name := make([]byte, 0, 32+len(retryKey)+1)
	name = append(name, key[:]...)
	name = append(name, video[:]...)
	name = append(name, 0)
	name = append(name, retryKey...)
	return uuid.NewSHA1(retrySpace, name)
}

// PurchasedVideo is one line of a purchase result.
type PurchasedVideo struct {
	PurchaseID   uuid.UUID
	VideoID      uuid.UUID
	PricePaid    money.Cents
	PurchasedAt  time.Time
	AlreadyOwned bool
	Download     Link // zero on a dry run, and when LicenseRevoked
	// LicenseID is the purchase's licence ("" on a dry run or a refusal),
	// revoked when LicenseRevoked (a licence owned before and revoked since).
	LicenseID      string
	LicenseRevoked bool
}

// PurchaseResult is what a purchase (or its quote) returns.
type PurchaseResult struct {
	Purchases    []PurchasedVideo
	TotalCharged money.Cents
	Balance      money.Cents // the live pool, or a test key's test balance
	DryRun       bool
	Livemode     bool // false for a test key's purchase
}

// Purchase buys videos for the calling key from its account's shared pool
// (a test key from the account's test balance),
// all or nothing: unknown videos are 404 (naming them), an insufficient pool
// is 402, a wrong expected_total is 409; in each case nothing is charged.
// Videos the key already owns are returned again and not charged.
func (s *Service) Purchase(ctx context.Context, p tenancy.Principal, req PurchaseRequest) (PurchaseResult, error) {
	if p.AccountID == uuid.Nil {
		return PurchaseResult{}, apperr.New(apperr.Forbidden, "this key belongs to no account")
	}
	if req.Bulk && len(req.VideoIDs) == 0 {
		return s.emptyPurchase(ctx, p, req)
	}
	limit := MaxVideosPerPurchase
	if req.Bulk {
		limit = MaxVideosPerBulkPurchase
	}
	ids, err := uniqueIDs(req.VideoIDs, limit)
	if err != nil {
		return PurchaseResult{}, err
	}
	job := newJob(p.KeyID, "", ids, req.ExpectedTotal, req.DryRun, p.Test)
	if req.RetryKey != "" && p.KeyID != uuid.Nil {
		for i, id := range ids {
			job.newIDs[i] = RetryPurchaseID(p.KeyID, req.RetryKey, id)
		}
		job.retryKey = req.RetryKey
	}
	job.trace, job.span = outbox.Trace(ctx), trace.SpanContextFromContext(ctx)
	return s.purchase(p.AccountID, job)
}

// purchase runs a job through the one purchase statement and signs the
// links of its result. A quote needs no lock and runs on its own; a
// purchase joins its account's next batch.
func (s *Service) purchase(account uuid.UUID, job *purchaseJob) (PurchaseResult, error) {
	if job.dry {
		s.batch.run(account, []*purchaseJob{job})
	} else {
		s.batch.do(account, job)
	}
	if job.err != nil {
		return PurchaseResult{}, job.err
	}
	out, err := job.answer()
	if err != nil {
		return PurchaseResult{}, err
	}
	for i := range out.Purchases {
		if !job.dry && !out.Purchases[i].LicenseRevoked {
			out.Purchases[i].Download = s.links.Sign(out.Purchases[i].PurchaseID)
		}
	}
	return out, nil
}

// emptyPurchase answers a bulk purchase with nothing left to buy: nothing
// is charged, and an expected_total other than zero is 409 as on any
// purchase whose total differs.
func (s *Service) emptyPurchase(ctx context.Context, p tenancy.Principal, req PurchaseRequest) (PurchaseResult, error) {
	if req.ExpectedTotal != nil && *req.ExpectedTotal != 0 {
		return PurchaseResult{}, apperr.New(apperr.PriceChanged, "the purchase costs %s USD (nothing to buy), not the expected %s USD",
			money.Cents(0), *req.ExpectedTotal).With("total", money.Cents(0)).With("expected_total", *req.ExpectedTotal).With("currency", "USD")
	}
	var bal money.Cents
	var err error
	if p.Test {
		bal, err = s.TestBalance(ctx, p.AccountID)
	} else {
		err = s.pool.QueryRow(ctx, balanceSQL, p.AccountID).Scan(&bal)
	}
	if err != nil {
		return PurchaseResult{}, database.Interpret(err, "account not found")
	}
	return PurchaseResult{Purchases: []PurchasedVideo{}, Balance: bal, DryRun: req.DryRun, Livemode: !p.Test}, nil
}

func uniqueIDs(in []uuid.UUID, limit int) ([]uuid.UUID, error) {
	if len(in) == 0 {
		return nil, apperr.InvalidField("video_ids", "video_ids must hold 1 to %d video ids", limit)
	}
	seen := make(map[uuid.UUID]bool, len(in))
	out := make([]uuid.UUID, 0, len(in))
	for _, id := range in {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) > limit {
		return nil, apperr.InvalidField("video_ids", "at most %d distinct video ids per purchase, got %d", limit, len(out))
	}
	return out, nil
}
