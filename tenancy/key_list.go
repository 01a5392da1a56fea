package tenancy

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/paging"
)

// KeyListBounds are GET /api/v1/keys' paging limits, for the adapters to
// read a request's paging with: 100 keys by default, at most 500 (a larger
// limit is clamped, as on every list). It pages by cursor only.
var KeyListBounds = paging.Bounds{DefaultLimit: 100, MaxLimit: 500, Window: 500, NoOffset: true}

// Key statuses a list filters on.
const (
	KeyStatusActive  = "active"
	KeyStatusRevoked = "revoked"
)

// KeyListParams are the inputs of a key listing: the filters as they come
// from a URL query, and the page read against KeyListBounds.
type KeyListParams struct {
	Page          paging.Request
	CustomerLabel string // exact, after trimming
	Status        string // active | revoked
	Mode          string // live | test
}

// KeyListQuery is a validated key listing.
type KeyListQuery struct {
	Limit  int
	Label  string
	Status string
	Mode   string // "" for both
	// after is the decoded cursor: the page starts after the key created
	// at its one key with its id.
	after *paging.Cursor
}

// keyOrder is the list's order, oldest first, ties by id: the one the
// (parent_id, created_at, id) index yields.
var keyOrder = paging.Order{Keys: []string{"created_at"}, ID: "id"}

// Parse validates the parameters: bad values are 400 naming them.
func (kp KeyListParams) Parse() (KeyListQuery, error) {
	var q KeyListQuery
	pr, err := KeyListBounds.Apply(kp.Page)
	if err != nil {
		return q, err
	}
	q.Limit = pr.Limit
	if q.Label, err = NormalizeLabel("customer_label", kp.CustomerLabel, false); err != nil {
		return q, err
	}
	switch s := strings.ToLower(strings.TrimSpace(kp.Status)); s {
	case "", KeyStatusActive, KeyStatusRevoked:
		q.Status = s
	default:
		return q, apperr.InvalidField("status", "status must be active or revoked, got %q", apperr.Clip(kp.Status)).
			With("allowed_values", []string{KeyStatusActive, KeyStatusRevoked})
	}
	if kp.Mode != "" {
		test, err := ParseKeyMode(kp.Mode)
		if err != nil {
			return q, err
		}
		q.Mode = ModeName(test)
	}
	if pr.Cursor != "" {
		c, err := paging.ReadCursor(pr.Cursor, q.fingerprint(), paging.KeyTime)
		if err != nil {
			return q, err
		}
		q.after = &c
	}
	return q, nil
}

func (q KeyListQuery) fingerprint() string { return paging.Fingerprint(q.Label, q.Status, q.Mode) }

// KeyPage is one page of keys; NextCursor continues after it ("" on the
// last page).
type KeyPage struct {
	Keys       []Key
	HasMore    bool
	NextCursor string
}

// CustomerKeyPage lists one page of a root key's customer keys, oldest
// first (keys created meanwhile come at the end, so pages never shift), revoked
// ones too unless the status says otherwise. With usage, the counters add
// what is counted in Redis but not flushed yet (Usage.AddPending), so they
// are exact up to the last request without flushing anything.
func (s *Service) CustomerKeyPage(ctx context.Context, root Principal, q KeyListQuery, usage *Usage) (KeyPage, error) {
	read := func(ctx context.Context, batch string) ([]Key, bool, error) {
		return s.customerKeyRows(ctx, root, q, batch)
	}
	keys, err := usage.readExact(ctx, read)
	if err != nil {
		return KeyPage{}, err
	}
	var out KeyPage
	out.Keys, out.HasMore, out.NextCursor = paging.Page(keys, q.Limit, func(last Key) paging.Cursor {
		return paging.Cursor{Query: q.fingerprint(), Keys: []any{last.CreatedAt}, ID: last.ID}
	})
	return out, nil
}

// customerKeyRows reads limit+1 keys of the page (the extra one says whether
// another page follows) and, in the same snapshot, whether the usage batch
// named batch was applied already.
func (s *Service) customerKeyRows(ctx context.Context, root Principal, q KeyListQuery, batch string) ([]Key, bool, error) {
	b := &paging.Builder{}
	// $1, $2 and $3, as customerKeyRowsSQL reads them.
	b.Where("account_id = "+b.Arg(root.AccountID), "parent_id = "+b.Arg(root.KeyID))
	b.Arg(batch)
	if q.Label != "" {
		b.Where("label = " + b.Arg(q.Label))
	}
	switch q.Status {
	case KeyStatusActive:
		b.Where("revoked_at IS NULL")
	case KeyStatusRevoked:
		b.Where("revoked_at IS NOT NULL")
	}
	switch q.Mode {
	case ModeLive:
		b.Where("livemode")
	case ModeTest:
		b.Where("NOT livemode")
	}
	if q.after != nil {
		b.Where(keyOrder.After(b, q.after.Keys, q.after.ID))
	}
	rows, err := s.pool.Query(ctx, customerKeyRowsSQL(b.And(), keyOrder.By(), b.Limit(q.Limit)), b.Args()...)
	if err != nil {
		return nil, false, fmt.Errorf("list keys: %w", err)
	}
	applied := false
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Key, error) {
		var row keyRow
		err := r.Scan(row.dest(&applied)...)
		return row.key(), err
	})
	if err != nil {
		return nil, false, fmt.Errorf("list keys: %w", err)
	}
	return keys, applied, nil
}
