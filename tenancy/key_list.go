package tenancy

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
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
	after  *keyPosition
}

// keyPosition is where a page starts: after the key created at at with id.
type keyPosition struct {
	at time.Time
	id uuid.UUID
}

// keyCursorJSON is a position as it travels in a cursor, with a
// fingerprint of the filters so that a cursor of another query is refused.
type keyCursorJSON struct {
	Query string    `json:"q"`
	At    string    `json:"t"`
	ID    uuid.UUID `json:"i"`
}

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
		var c keyCursorJSON
		if err := paging.DecodeCursor(pr.Cursor, &c); err != nil {
			return q, err
		}
		at, err := time.Parse(time.RFC3339Nano, c.At)
		if err != nil || c.Query != q.fingerprint() {
			return q, paging.BadCursor()
		}
		q.after = &keyPosition{at: at, id: c.ID}
	}
	return q, nil
}

func (q KeyListQuery) fingerprint() string {
	h := fnv.New64a()
	h.Write([]byte(q.Label + "\x00" + q.Status + "\x00" + q.Mode))
	return strconv.FormatUint(h.Sum64(), 36)
}

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
	if len(keys) > q.Limit {
		keys = keys[:q.Limit]
		last := keys[q.Limit-1]
		out.HasMore = true
		out.NextCursor = paging.EncodeCursor(keyCursorJSON{Query: q.fingerprint(),
			At: last.CreatedAt.UTC().Format(time.RFC3339Nano), ID: last.ID})
	}
	out.Keys = keys
	return out, nil
}

// customerKeyRows reads limit+1 keys of the page (the extra one says whether
// another page follows) and, in the same snapshot, whether the usage batch
// named batch was applied already.
func (s *Service) customerKeyRows(ctx context.Context, root Principal, q KeyListQuery, batch string) ([]Key, bool, error) {
	args := []any{root.AccountID, root.KeyID, batch}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := "account_id = $1 AND parent_id = $2"
	if q.Label != "" {
		where += " AND label = " + arg(q.Label)
	}
	switch q.Status {
	case KeyStatusActive:
		where += " AND revoked_at IS NULL"
	case KeyStatusRevoked:
		where += " AND revoked_at IS NOT NULL"
	}
	switch q.Mode {
	case ModeLive:
		where += " AND livemode"
	case ModeTest:
		where += " AND NOT livemode"
	}
	if q.after != nil {
		where += " AND (created_at, id) > (" + arg(q.after.at) + ", " + arg(q.after.id) + ")"
	}
	rows, err := s.pool.Query(ctx, customerKeyRowsSQL(where, arg(q.Limit+1)), args...)
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
