package api

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/money"
	"broll/internal/paging"
	"broll/tenancy"
)

type keyJSON struct {
	ID            uuid.UUID  `json:"id"`
	CustomerLabel string     `json:"customer_label"`
	KeyPrefix     string     `json:"key_prefix"`
	Kind          string     `json:"kind"`
	Scopes        []string   `json:"scopes"`
	CreatedAt     time.Time  `json:"created_at"`
	RevokedAt     *time.Time `json:"revoked_at"`
	TotalRequests int64      `json:"total_requests"`
	LastUsedAt    *time.Time `json:"last_used_at"`
	Mode          string     `json:"mode"`     // live | test
	Livemode      bool       `json:"livemode"` // false for a test key
	// Customer keys only: root keys have no limits of their own.
	SpendLimit         *spendLimitJSON `json:"spend_limit,omitempty"`
	Spent              *spentJSON      `json:"spent,omitempty"`
	RateLimitPerMinute *int            `json:"rate_limit_per_minute,omitempty"`
	// LicenseeName is printed on the key's licences (null: none).
	LicenseeName *string `json:"licensee_name"`
}

type spendLimitJSON struct {
	Amount   money.Cents `json:"amount"`
	Period   string      `json:"period"`
	Currency string      `json:"currency"`
}

type spentJSON struct {
	Amount         money.Cents `json:"amount"`
	Currency       string      `json:"currency"`
	Period         string      `json:"period"`
	PeriodStart    *time.Time  `json:"period_start"`
	PeriodResetsAt *time.Time  `json:"period_resets_at"`
}

// renderSpend is a key's limit (null for none) and what it spent in the
// limit's period.
func renderSpend(k tenancy.Key) (*spendLimitJSON, *spentJSON) {
	period := string(tenancy.SpendTotal)
	var lim *spendLimitJSON
	if k.SpendLimit != nil {
		period = string(k.SpendLimit.Period)
		lim = &spendLimitJSON{Amount: k.SpendLimit.Amount, Period: period, Currency: "USD"}
	}
	return lim, &spentJSON{Amount: k.Spent.Amount, Currency: "USD", Period: period,
		PeriodStart: k.Spent.PeriodStart, PeriodResetsAt: k.Spent.ResetsAt}
}

func renderKey(k tenancy.Key) keyJSON {
	scopes := make([]string, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = string(s)
	}
	out := keyJSON{
		ID: k.ID, CustomerLabel: k.Label, KeyPrefix: k.Prefix, Kind: string(k.Kind), Scopes: scopes,
		CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt, TotalRequests: k.TotalRequests, LastUsedAt: k.LastUsedAt,
		Mode: tenancy.ModeName(k.Test), Livemode: !k.Test, LicenseeName: k.LicenseeName,
	}
	if k.Kind == tenancy.KindCustomer {
		out.SpendLimit, out.Spent = renderSpend(k)
		out.RateLimitPerMinute = k.RateLimitPerMinute
	}
	return out
}

// spendLimitInput is "spend_limit" in a key's body: an object, or null for
// no limit.
type spendLimitInput struct {
	Amount *money.Cents `json:"amount"`
	Period string       `json:"period"`
}

func (in *spendLimitInput) limit() (*tenancy.SpendLimit, error) {
	if in == nil {
		return nil, nil
	}
	if in.Amount == nil {
		return nil, apperr.InvalidField("spend_limit.amount", "spend_limit.amount is required (dollars)")
	}
	l, err := tenancy.ParseSpendLimit(*in.Amount, in.Period)
	return &l, err
}

// optional is a body field whose absence differs from null: PATCH changes
// only the fields it names, and null clears one.
type optional[T any] struct {
	Set   bool
	Value *T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Value = nil
		return nil
	}
	o.Value = new(T)
	return json.Unmarshal(b, o.Value)
}

// readKeySpec reads a POST /keys body into the key the handler creates,
// which is also what its Idempotency-Key fingerprint is taken over.
func readKeySpec(body []byte) (tenancy.CustomerKeySpec, error) {
	var req struct {
		CustomerLabel *string          `json:"customer_label"`
		Scopes        []string         `json:"scopes"`
		SpendLimit    *spendLimitInput `json:"spend_limit"`
		RateLimit     *int             `json:"rate_limit_per_minute"`
		Mode          *string          `json:"mode"`
		LicenseeName  *string          `json:"licensee_name"`
	}
	if err := decodeBody(body, &req); err != nil {
		return tenancy.CustomerKeySpec{}, err
	}
	if req.CustomerLabel == nil {
		return tenancy.CustomerKeySpec{}, apperr.InvalidField("customer_label", "customer_label is required (1-200 characters)")
	}
	limit, err := req.SpendLimit.limit()
	if err != nil {
		return tenancy.CustomerKeySpec{}, err
	}
	test := false
	if req.Mode != nil {
		if test, err = tenancy.ParseKeyMode(*req.Mode); err != nil {
			return tenancy.CustomerKeySpec{}, err
		}
	}
	return tenancy.CustomerKeySpec{Label: *req.CustomerLabel, Scopes: req.Scopes, SpendLimit: limit, RateLimit: req.RateLimit,
		Test: test, LicenseeName: req.LicenseeName}, nil
}

func (s *keysAPI) createKey(c *fiber.Ctx) error {
	spec, err := readKeySpec(c.Request().Body())
	if err != nil {
		return err
	}
	return s.replay.idempotent(c, spec, func() error {
		k, err := s.tenancy.CreateCustomerKeyWith(c.UserContext(), principal(c), spec)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(fiber.Map{
			"success": true,
			"api_key": k.Secret,
			"details": renderKey(k.Key),
		})
	})
}

// keyPaginationJSON is the key list's paging: keyset only.
type keyPaginationJSON struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func (s *keysAPI) listKeys(c *fiber.Ctx) error {
	pr, err := paging.Parse(queryValues(c), tenancy.KeyListBounds)
	if err != nil {
		return err
	}
	q, err := tenancy.KeyListParams{
		Page:          pr,
		CustomerLabel: c.Query("customer_label"), Status: c.Query("status"), Mode: c.Query("mode"),
	}.Parse()
	if err != nil {
		return err
	}
	// The counters add what Redis counted but did not flush yet, for the
	// keys of this page only: exact up to the last request, with no flush.
	page, err := s.tenancy.CustomerKeyPage(c.UserContext(), principal(c), q, s.usage)
	if err != nil {
		return err
	}
	out := make([]keyJSON, len(page.Keys))
	for i, k := range page.Keys {
		out[i] = renderKey(k)
	}
	pg := keyPaginationJSON{Limit: q.Limit, HasMore: page.HasMore}
	if page.NextCursor != "" {
		pg.NextCursor = &page.NextCursor
	}
	return c.JSON(fiber.Map{"success": true, "keys": out, "pagination": pg})
}

// keyIDParam is the ?id= of a key route: required, a UUID.
func keyIDParam(c *fiber.Ctx) (uuid.UUID, error) {
	raw := c.Query("id")
	if raw == "" {
		return uuid.Nil, apperr.InvalidField("id", "query parameter id (the key's UUID) is required")
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, apperr.InvalidField("id", "id %q is not a UUID", apperr.Clip(raw))
	}
	return id, nil
}

// updateKey is PATCH /api/v1/keys?id=: a customer key's label, spend limit
// and rate limit. The change is published (a Redis marker) before the
// answer, so every node serves the key with its new settings from its next
// request on.
func (s *keysAPI) updateKey(c *fiber.Ctx) error {
	id, err := keyIDParam(c)
	if err != nil {
		return err
	}
	var req struct {
		CustomerLabel *string                   `json:"customer_label"`
		SpendLimit    optional[spendLimitInput] `json:"spend_limit"`
		RateLimit     optional[int]             `json:"rate_limit_per_minute"`
		LicenseeName  optional[string]          `json:"licensee_name"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.CustomerLabel == nil && !req.SpendLimit.Set && !req.RateLimit.Set && !req.LicenseeName.Set {
		return apperr.New(apperr.Invalid, "nothing to change: give customer_label, spend_limit, rate_limit_per_minute or licensee_name")
	}
	u := tenancy.KeyUpdate{Label: req.CustomerLabel, SpendLimitSet: req.SpendLimit.Set,
		RateLimitSet: req.RateLimit.Set, RateLimit: req.RateLimit.Value,
		LicenseeNameSet: req.LicenseeName.Set, LicenseeName: req.LicenseeName.Value}
	if u.SpendLimit, err = req.SpendLimit.Value.limit(); err != nil {
		return err
	}
	p := principal(c)
	if p.Kind != tenancy.KindRoot {
		return apperr.New(apperr.Forbidden, "only a root key can change customer keys")
	}
	k, err := s.keyChanges.Update(c.UserContext(), tenancy.CustomerKeysOf(p), id, u)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "key": renderKey(k)})
}

func (s *keysAPI) revokeKey(c *fiber.Ctx) error {
	id, err := keyIDParam(c)
	if err != nil {
		return err
	}
	rev, err := s.keyChanges.Revoke(c.UserContext(), tenancy.CustomerKeysOf(principal(c)), id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "id": rev.Key.ID, "revoked_at": rev.Key.RevokedAt})
}
