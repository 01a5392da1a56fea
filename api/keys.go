package api

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/apperr"
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
}

func renderKey(k tenancy.Key) keyJSON {
	scopes := make([]string, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = string(s)
	}
	return keyJSON{
		ID: k.ID, CustomerLabel: k.Label, KeyPrefix: k.Prefix, Kind: string(k.Kind), Scopes: scopes,
		CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt, TotalRequests: k.TotalRequests, LastUsedAt: k.LastUsedAt,
	}
}

func (s *server) createKey(c *fiber.Ctx) error {
	var req struct {
		CustomerLabel *string  `json:"customer_label"`
		Scopes        []string `json:"scopes"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.CustomerLabel == nil {
		return apperr.InvalidField("customer_label", "customer_label is required (1-200 characters)")
	}
	k, err := s.tenancy.CreateCustomerKey(c.UserContext(), principal(c), *req.CustomerLabel, req.Scopes)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{
		"success": true,
		"api_key": k.Secret,
		"details": renderKey(k.Key),
	})
}

// keyPaginationJSON is the key list's paging: keyset only.
type keyPaginationJSON struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func (s *server) listKeys(c *fiber.Ctx) error {
	q, err := tenancy.KeyListParams{
		Limit: c.Query("limit"), Cursor: c.Query("cursor"),
		CustomerLabel: c.Query("customer_label"), Status: c.Query("status"),
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

func (s *server) revokeKey(c *fiber.Ctx) error {
	raw := c.Query("id")
	if raw == "" {
		return apperr.InvalidField("id", "query parameter id (the key's UUID) is required")
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return apperr.InvalidField("id", "id %q is not a UUID", raw)
	}
	k, err := s.tenancy.RevokeCustomerKey(c.UserContext(), principal(c), id)
	if err != nil {
		return err
	}
	// The marker makes every node refuse the key on its next request. If it
	// cannot be written, say so: the client retries (revocation is idempotent).
	if err := s.gate.MarkRevoked(c.UserContext(), k.ID); err != nil {
		return apperr.New(apperr.Unavailable, "key revoked in the database but not yet on every node; retry the request")
	}
	s.auth.Forget(k.ID)
	return c.JSON(fiber.Map{"success": true, "id": k.ID, "revoked_at": k.RevokedAt})
}
