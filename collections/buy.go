package collections

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/billing"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/tenancy"
)

// Buy buys every clip of a collection p sees that p's key does not own
// and that is on sale (live, its media passed by the probe), all or
// nothing, through billing's one purchase statement (a bulk purchase, with
// expected_total and dry_run as on any purchase); the others are listed as
// Skipped (already_owned, retired, unavailable) and never charged. A clip
// taken off sale between the reading of the collection and the purchase
// makes the statement refuse the whole purchase; the collection is then
// read again once and the purchase retried without it.
func (s *Service) Buy(ctx context.Context, p tenancy.Principal, req BuyRequest) (BuyResult, error) {
	if _, err := s.Get(ctx, p, req.CollectionID); err != nil {
		return BuyResult{}, err
	}
	var out BuyResult
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		out, err = s.buyOnce(ctx, p, req)
		if apperr.CodeOf(err) != apperr.NotFound {
			break
		}
	}
	return out, err
}

type buyLine struct {
	VideoID uuid.UUID
	Skip    string
	// OwnedBy and OwnedAt are the purchase by which the key owns the clip.
	OwnedBy *uuid.UUID
	OwnedAt *time.Time
}

func (s *Service) buyOnce(ctx context.Context, p tenancy.Principal, req BuyRequest) (BuyResult, error) {
	lines, err := database.Select(ctx, s.pool, pgx.RowToStructByPos[buyLine], buyLinesSQL, req.CollectionID, p.KeyID)
	if err != nil {
		return BuyResult{}, database.Interpret(err, notFoundMsg)
	}
	buy := make([]uuid.UUID, 0, len(lines))
	skipped := []Skipped{}
	for _, l := range lines {
		if l.Skip == SkipAlreadyOwned && l.OwnedBy != nil &&
			billing.BoughtByRetry(p.KeyID, req.RetryKey, l.VideoID, *l.OwnedBy, *l.OwnedAt, time.Now()) {
			// Bought by an earlier run of this very request: billing
			// answers it as bought, with its charge, as that run would have.
			l.Skip = ""
		}
		if l.Skip == "" {
			buy = append(buy, l.VideoID)
		} else {
			skipped = append(skipped, Skipped{VideoID: l.VideoID, Reason: l.Skip})
		}
	}
	res, err := s.billing.Purchase(ctx, p, billing.PurchaseRequest{VideoIDs: buy, ExpectedTotal: req.ExpectedTotal,
		DryRun: req.DryRun, Bulk: true, RetryKey: req.RetryKey})
	if err != nil {
		return BuyResult{}, err
	}
	return BuyResult{PurchaseResult: res, Skipped: skipped}, nil
}
