package api

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/license"
	"broll/collections"
	"broll/internal/apperr"
	"broll/internal/money"
	"broll/tenancy"
)

type purchaseLineJSON struct {
	PurchaseID           *uuid.UUID  `json:"purchase_id"`
	VideoID              uuid.UUID   `json:"video_id"`
	DownloadURL          *string     `json:"download_url"`
	DownloadURLExpiresAt *time.Time  `json:"download_url_expires_at"`
	PricePaid            money.Cents `json:"price_paid"`
	Currency             string      `json:"currency"`
	PurchasedAt          *time.Time  `json:"purchased_at"`
	AlreadyOwned         bool        `json:"already_owned"`
	// License names the purchase's licence; absent on a quote of a clip
	// not owned yet.
	License *license.Ref `json:"license,omitempty"`
}

type purchaseResultJSON struct {
	Purchases    []purchaseLineJSON `json:"purchases"`
	TotalCharged money.Cents        `json:"total_charged"`
	Currency     string             `json:"currency"`
	Balance      money.Cents        `json:"balance"`
	DryRun       bool               `json:"dry_run"`
	Livemode     bool               `json:"livemode"` // false: a test key's, paid from the test balance
	// Skipped are the clips of a bought collection that were not charged;
	// absent on a purchase by video_ids, present (maybe empty) on one by
	// collection_id.
	Skipped *[]skippedJSON `json:"skipped,omitempty"`
}

// skippedJSON is a clip of a bought collection left out of the purchase.
type skippedJSON struct {
	VideoID uuid.UUID `json:"video_id"`
	Reason  string    `json:"reason"` // retired | unavailable | already_owned
}

// purchaseInput is the body of POST /api/v1/broll/purchase and the input of
// the MCP purchase_videos tool.
type purchaseInput struct {
	VideoIDs      []string     `json:"video_ids"`
	ExpectedTotal *json.Number `json:"expected_total,omitempty"`
	DryRun        bool         `json:"dry_run,omitempty"`
}

func (in purchaseInput) request() (billing.PurchaseRequest, error) {
	var req billing.PurchaseRequest
	if in.VideoIDs == nil {
		return req, apperr.InvalidField("video_ids", "video_ids is required: an array of 1 to %d video ids", billing.MaxVideosPerPurchase)
	}
	if len(in.VideoIDs) > 10*billing.MaxVideosPerPurchase {
		return req, apperr.InvalidField("video_ids", "at most %d distinct video ids per purchase", billing.MaxVideosPerPurchase)
	}
	for i, raw := range in.VideoIDs {
		id, err := uuid.Parse(raw)
		if err != nil {
			return req, apperr.InvalidField("video_ids", "video_ids[%d] = %q is not a UUID", i, apperr.Clip(raw))
		}
		req.VideoIDs = append(req.VideoIDs, id)
	}
	if in.ExpectedTotal != nil {
		c, err := money.ParseDollars(in.ExpectedTotal.String())
		if err != nil {
			return req, apperr.InvalidField("expected_total", "expected_total: %s", apperr.Clip(err.Error()))
		}
		req.ExpectedTotal = &c
	}
	req.DryRun = in.DryRun
	return req, nil
}

// renderPurchase writes a purchase's answer; lic names the licences (nil:
// none shown, as in the legacy v0 answers, whose shape is fixed).
func renderPurchase(r billing.PurchaseResult, lic *license.Service) purchaseResultJSON {
	out := purchaseResultJSON{TotalCharged: r.TotalCharged, Currency: "USD", Balance: r.Balance, DryRun: r.DryRun,
		Livemode: r.Livemode, Purchases: make([]purchaseLineJSON, 0, len(r.Purchases))}
	for _, p := range r.Purchases {
		line := purchaseLineJSON{VideoID: p.VideoID, PricePaid: p.PricePaid, Currency: "USD", AlreadyOwned: p.AlreadyOwned}
		if p.PurchaseID != uuid.Nil {
			id, at := p.PurchaseID, p.PurchasedAt
			line.PurchaseID, line.PurchasedAt = &id, &at
		}
		if p.Download.URL != "" {
			u, exp := p.Download.URL, p.Download.ExpiresAt
			line.DownloadURL, line.DownloadURLExpiresAt = &u, &exp
		}
		if lic != nil && p.LicenseID != "" {
			ref := lic.Ref(p.LicenseID, p.LicenseRevoked)
			line.License = &ref
		}
		out.Purchases = append(out.Purchases, line)
	}
	return out
}

// purchaseBody is the body of POST /api/v1/broll/purchase: the clips to
// buy by id, or a collection to buy whole (exactly one of the two).
type purchaseBody struct {
	VideoIDs      []string     `json:"video_ids"`
	CollectionID  *string      `json:"collection_id,omitempty"`
	ExpectedTotal *json.Number `json:"expected_total,omitempty"`
	DryRun        bool         `json:"dry_run,omitempty"`
}

// purchaseOrder is a purchase as the handler acts on it: Request, or with
// CollectionID set the collection whole (Request then holds its
// expected_total and dry_run only).
type purchaseOrder struct {
	Request      billing.PurchaseRequest
	CollectionID uuid.UUID
}

func (b purchaseBody) order() (purchaseOrder, error) {
	if b.CollectionID == nil {
		if b.VideoIDs == nil {
			return purchaseOrder{}, apperr.InvalidField("video_ids",
				"video_ids is required: an array of 1 to %d video ids (or collection_id, to buy a collection)", billing.MaxVideosPerPurchase)
		}
		req, err := purchaseInput{VideoIDs: b.VideoIDs, ExpectedTotal: b.ExpectedTotal, DryRun: b.DryRun}.request()
		return purchaseOrder{Request: req}, err
	}
	if b.VideoIDs != nil {
		return purchaseOrder{}, apperr.InvalidField("collection_id", "give video_ids or collection_id, not both")
	}
	id, err := uuid.Parse(*b.CollectionID)
	if err != nil {
		return purchaseOrder{}, apperr.InvalidField("collection_id", "collection_id %q is not a UUID", apperr.Clip(*b.CollectionID))
	}
	if id == uuid.Nil {
		// The zero id would read as "no collection": a purchase by ids.
		return purchaseOrder{}, apperr.InvalidField("collection_id", "collection_id %q names no collection", apperr.Clip(*b.CollectionID))
	}
	// The quote's fields are read as for a purchase by ids; the ids are
	// the collection's.
	req, err := purchaseInput{VideoIDs: []string{}, ExpectedTotal: b.ExpectedTotal, DryRun: b.DryRun}.request()
	return purchaseOrder{Request: req, CollectionID: id}, err
}

// fingerprinted is what the order's Idempotency-Key fingerprint is taken
// over: a purchase by ids as before collections existed (its request
// alone), so that a retry across an upgrade is still the same request.
func (o purchaseOrder) fingerprinted() any {
	if o.CollectionID == uuid.Nil {
		return o.Request
	}
	return o
}

// readPurchase reads a purchase body into the order the handler acts on,
// which is also what its Idempotency-Key fingerprint is taken over.
func readPurchase(body []byte) (purchaseOrder, error) {
	var in purchaseBody
	if err := decodeBody(body, &in); err != nil {
		return purchaseOrder{}, err
	}
	return in.order()
}

// place runs an order for p: a purchase by ids through billing, a
// collection through collections.Buy (which buys through billing's same
// statement); surface names the caller in the metrics.
func (s *purchasesAPI) place(ctx context.Context, p tenancy.Principal, o purchaseOrder, surface string) (purchaseResultJSON, error) {
	if o.CollectionID == uuid.Nil {
		res, err := s.billing.Purchase(ctx, p, o.Request)
		s.metrics.observePurchase(surface, res, err)
		if err != nil {
			return purchaseResultJSON{}, err
		}
		return renderPurchase(res, s.licenses), nil
	}
	res, err := s.collections.Buy(ctx, p, collections.BuyRequest{CollectionID: o.CollectionID,
		ExpectedTotal: o.Request.ExpectedTotal, DryRun: o.Request.DryRun, RetryKey: o.Request.RetryKey})
	s.metrics.observePurchase(surface, res.PurchaseResult, err)
	if err != nil {
		return purchaseResultJSON{}, err
	}
	out := renderPurchase(res.PurchaseResult, s.licenses)
	skipped := make([]skippedJSON, len(res.Skipped))
	for i, sk := range res.Skipped {
		skipped[i] = skippedJSON{VideoID: sk.VideoID, Reason: sk.Reason}
	}
	out.Skipped = &skipped
	return out, nil
}

func (s *purchasesAPI) purchase(c *fiber.Ctx) error {
	order, err := readPurchase(c.Request().Body())
	if err != nil {
		return err
	}
	return s.replay.idempotent(c, order.fingerprinted(), func() error {
		// Run again after an answer that was not kept (a 5xx, a client
		// gone), the request finds the purchases its first run made by
		// their ids, which derive from its Idempotency-Key.
		order.Request.RetryKey = strings.Clone(c.Get("Idempotency-Key"))
		out, err := s.place(c.UserContext(), principal(c), order, "v1")
		if err != nil {
			return err
		}
		return c.JSON(out)
	})
}

type balanceJSON struct {
	AccountID uuid.UUID   `json:"account_id"`
	Balance   money.Cents `json:"balance"`
	Currency  string      `json:"currency"`
	Livemode  bool        `json:"livemode"` // false: a test key's, which sees the test balance
	Key       struct {
		ID            uuid.UUID `json:"id"`
		Kind          string    `json:"kind"`
		CustomerLabel string    `json:"customer_label"`
		// A customer key's spend limit (null: none) and what it spent in
		// the limit's period; absent for root keys.
		SpendLimit *spendLimitJSON `json:"spend_limit,omitempty"`
		Spent      *spentJSON      `json:"spent,omitempty"`
	} `json:"key"`
	MonthToDate struct {
		Purchases int         `json:"purchases"`
		Amount    money.Cents `json:"amount"`
		Currency  string      `json:"currency"`
		Since     string      `json:"since"`
	} `json:"month_to_date"`
}

func (s *purchasesAPI) balanceView(c *fiber.Ctx) (balanceJSON, error) {
	p := principal(c)
	now := s.now()
	sum, err := s.billing.Summary(c.UserContext(), p, now)
	if err != nil {
		return balanceJSON{}, err
	}
	var out balanceJSON
	out.AccountID, out.Balance, out.Currency, out.Livemode = sum.AccountID, sum.Balance, "USD", sum.Livemode
	out.Key.ID, out.Key.Kind, out.Key.CustomerLabel = p.KeyID, string(p.Kind), p.Label
	if p.Kind == tenancy.KindCustomer {
		k, err := s.tenancy.GetKey(c.UserContext(), p.KeyID)
		if err != nil {
			return balanceJSON{}, err
		}
		out.Key.SpendLimit, out.Key.Spent = renderSpend(k)
	}
	out.MonthToDate.Purchases, out.MonthToDate.Amount, out.MonthToDate.Currency = sum.MonthPurchases, sum.MonthAmount, "USD"
	out.MonthToDate.Since = time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
	return out, nil
}

func (s *purchasesAPI) balance(c *fiber.Ctx) error {
	out, err := s.balanceView(c)
	if err != nil {
		return err
	}
	return c.JSON(out)
}
