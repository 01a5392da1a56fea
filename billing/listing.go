package billing

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"broll/billing/license"
	"broll/catalog/search"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
	"broll/internal/paging"
	"broll/tenancy"
)

// QueryEmbedder turns a search text into a vector of the current model
// (embed.QueryCache in production). RelevanceFloor is the model's cosine
// similarity under which a match by meaning is noise.
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Model() string
	RelevanceFloor() float64
}

// ListParams are the inputs of a purchase listing: the filters as they come
// from a URL query or an MCP tool call, and the page read against
// ListBounds (its cursor a next_cursor of the same query).
type ListParams struct {
	StartDate, EndDate     string
	Search, SemanticSearch string
	Emotion                string
	APIKeyID               string
	// LicenseStatus keeps the purchases whose licence is "active" or
	// "revoked" now ("": all).
	LicenseStatus string
	Page          paging.Request
}

// Limits of a purchase listing. A huge limit is clamped, not refused;
// offset + limit may not pass maxListWindow (a deep OFFSET reads and throws
// away every row before it; a cursor is not bounded by it); search texts
// are bounded like the catalog's.
const (
	defaultListLimit = 50
	maxListLimit     = 500
	maxListWindow    = 10_000
	maxSearchLength  = 1000
)

// ListQuery is a validated purchase listing.
type ListQuery struct {
	Start, End     *time.Time // inclusive UTC days
	Search         string
	SemanticSearch string
	Emotion        string
	KeyID          *uuid.UUID
	LicenseStatus  license.Status // "": any
	Limit, Offset  int
	// after is the decoded cursor: the page starts after it (Offset is 0).
	after *paging.Cursor
}

// Parse validates the parameters for a principal: bad values are 400, and
// api_key_id is a root key's filter only (403 for a customer key).
func (lp ListParams) Parse(p tenancy.Principal) (ListQuery, error) {
	var q ListQuery
	var err error
	if q.Start, q.End, err = parseDays(lp.StartDate, lp.EndDate); err != nil {
		return q, err
	}
	q.Search, q.SemanticSearch = strings.TrimSpace(lp.Search), strings.TrimSpace(lp.SemanticSearch)
	// Postgres refuses invalid UTF-8 and NUL; name the parameter instead.
	for _, f := range [][2]string{{"search", q.Search}, {"semantic_search", q.SemanticSearch}} {
		if !database.ValidText(f[1]) {
			return q, apperr.InvalidField(f[0], "%s must be UTF-8 text without NUL characters", f[0])
		}
	}
	if q.Search != "" && q.SemanticSearch != "" {
		return q, apperr.New(apperr.ConflictingSearch, "use either search or semantic_search, not both")
	}
	if len(q.Search) > maxSearchLength || len(q.SemanticSearch) > maxSearchLength {
		return q, apperr.InvalidField("search", "search texts are limited to %d characters", maxSearchLength)
	}
	if q.Emotion, err = search.ParseEmotion(lp.Emotion); err != nil {
		return q, err
	}
	if lp.APIKeyID != "" {
		// The id itself is checked against the key's own customers by the
		// listing (checkKeyFilter), which needs the database.
		if p.Kind != tenancy.KindRoot {
			return q, apperr.New(apperr.Forbidden, "api_key_id is a root key's filter; a customer key sees only its own purchases")
		}
		id, err := uuid.Parse(lp.APIKeyID)
		if err != nil {
			return q, apperr.InvalidField("api_key_id", "api_key_id %q is not a UUID", apperr.Clip(lp.APIKeyID))
		}
		q.KeyID = &id
	}
	switch st := license.Status(strings.TrimSpace(lp.LicenseStatus)); st {
	case "", license.Active, license.Revoked:
		q.LicenseStatus = st
	default:
		return q, apperr.InvalidField("license_status", "license_status must be active or revoked, got %q", apperr.Clip(lp.LicenseStatus))
	}
	pr, err := ListBounds.Apply(lp.Page)
	if err != nil {
		return q, err
	}
	q.Limit, q.Offset = pr.Limit, pr.Offset
	if pr.Cursor != "" {
		// Decoded against the filters just parsed: a cursor of another
		// query, or one edited by hand, is a 400 here.
		c, err := paging.ReadCursor(pr.Cursor, q.fingerprint(), q.cursorKinds()...)
		if err != nil {
			return q, err
		}
		q.after, q.Offset = &c, c.N
	}
	return q, nil
}

// parseDays reads a start_date and end_date (YYYY-MM-DD, either absent)
// and refuses a start after the end.
func parseDays(start, end string) (*time.Time, *time.Time, error) {
	var days [2]*time.Time
	for i, f := range [2]string{"start_date", "end_date"} {
		v := [2]string{start, end}[i]
		if v == "" {
			continue
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return nil, nil, apperr.InvalidField(f, "%s %q is not a date (YYYY-MM-DD)", f, apperr.Clip(v))
		}
		days[i] = &t
	}
	if days[0] != nil && days[1] != nil && days[0].After(*days[1]) {
		return nil, nil, apperr.InvalidField("start_date", "start_date %s is after end_date %s", start, end)
	}
	return days[0], days[1], nil
}

// PurchaseRecord is one purchase as listed for billing.
type PurchaseRecord struct {
	PurchaseID    uuid.UUID
	VideoID       uuid.UUID
	APIKeyID      *uuid.UUID
	CustomerLabel string
	PricePaid     money.Cents
	PurchasedAt   time.Time
	Legacy        bool
	Livemode      bool // false for a test key's purchase
	CustomerEmail *string
	Similarity    *float64
	Video         VideoSummary
	// Download is the zero Link when DownloadRevoked: the purchase's key (or
	// its root) was revoked, and its links stopped working with it, or its
	// licence was (LicenseRevoked), and its file is no longer delivered.
	Download        Link
	DownloadRevoked bool
	// LicenseID is the purchase's licence (billing/license), revoked when
	// LicenseRevoked.
	LicenseID      string
	LicenseRevoked bool
}

// VideoSummary is the part of a video shown in purchase history (retired
// videos included).
type VideoSummary struct {
	ID              uuid.UUID
	Title           string
	Emotion         string
	Gender          string
	Difficulty      string
	MediaType       string
	DurationSeconds *float64
	Retired         bool
}

// Listing is a page of purchases with a summary over every match.
// Query.Offset is the number of rows before the page, however it was asked
// for; NextCursor continues after the page ("" on the last one).
type Listing struct {
	Purchases  []PurchaseRecord
	Total      int
	Amount     money.Cents
	Query      ListQuery
	HasMore    bool
	NextCursor string
}

// filter is the one definition of which purchases a listing (page, summary
// or export) covers: what the key may see, narrowed by the query's filters
// other than semantic search. Its conditions are the WHERE of
// purchaseFromSQL.
func (q ListQuery) filter(p tenancy.Principal) *paging.Builder {
	f := visibleTo(p)
	if q.Start != nil {
		f.Where("p.purchased_at >= " + f.Arg(*q.Start))
	}
	if q.End != nil {
		f.Where("p.purchased_at < " + f.Arg(q.End.AddDate(0, 0, 1)))
	}
	if q.Emotion != "" {
		f.Where("v.emotion = " + f.Arg(q.Emotion))
	}
	if q.KeyID != nil {
		f.Where("p.api_key_id = " + f.Arg(*q.KeyID))
	}
	switch q.LicenseStatus {
	case license.Active:
		f.Where("p.license_revoked_at IS NULL")
	case license.Revoked:
		f.Where("p.license_revoked_at IS NOT NULL")
	}
	if q.Search != "" {
		w := "v.search_tsv @@ websearch_to_tsquery('english', " + f.Arg(q.Search) + ")"
		if pq := prefixQuery(q.Search); pq != "" {
			w = "(" + w + " OR v.search_tsv @@ to_tsquery('english', " + f.Arg(pq) + "))"
		}
		f.Where(w)
	}
	return f
}

// scanRecord reads a row of recordColumns (after the similarity, when
// similarity is not nil). PurchaseRecord nests its video, which a struct
// scan by name or position cannot fill, hence the list of targets.
func scanRecord(rows pgx.Rows, similarity **float64) (PurchaseRecord, error) {
	var r PurchaseRecord
	dest := []any{&r.PurchaseID, &r.VideoID, &r.APIKeyID, &r.CustomerLabel, &r.PricePaid, &r.PurchasedAt,
		&r.Legacy, &r.CustomerEmail, &r.Video.Title, &r.Video.Emotion, &r.Video.Gender,
		&r.Video.Difficulty, &r.Video.MediaType, &r.Video.DurationSeconds, &r.Video.Retired, &r.DownloadRevoked, &r.Livemode,
		&r.LicenseID, &r.LicenseRevoked}
	if similarity != nil {
		dest = append([]any{similarity}, dest...)
	}
	err := rows.Scan(dest...)
	r.Video.ID = r.VideoID
	return r, err
}

// ListPurchases lists what the key may see (visibleTo). The summary covers
// every match, not only the page. With semantic_search the matches are the
// purchases whose clip is at least the embedder's relevance floor alike,
// best first; without it every purchase counts, clips without a vector
// included.
func (s *Service) ListPurchases(ctx context.Context, p tenancy.Principal, q ListQuery, embedder QueryEmbedder) (Listing, error) {
	if q.KeyID != nil {
		if err := s.checkKeyFilter(ctx, p, *q.KeyID); err != nil {
			return Listing{}, err
		}
	}
	f := q.filter(p)
	similarity := "NULL::float8"
	if q.SemanticSearch != "" {
		if embedder == nil {
			return Listing{}, apperr.New(apperr.Unavailable, "semantic search is not available on this node")
		}
		vec, err := embedder.EmbedQuery(ctx, q.SemanticSearch)
		if err != nil {
			return Listing{}, apperr.New(apperr.Unavailable, "semantic search is unavailable right now; retry shortly")
		}
		// Only vectors of the query's model compare; the floor keeps a
		// search for something never bought from listing everything. The
		// similarity is the catalog search's: by the stored halfvecs.
		similarity = "(1 - (v.embedding_half <=> " + f.Arg(pgvector.NewHalfVector(vec)) + "::halfvec(768)))"
		f.Where("v.embedding_model = "+f.Arg(embedder.Model()),
			similarity+" >= "+f.Arg(embedder.RelevanceFloor()))
	}
	order := q.order(similarity)

	out := Listing{Query: q}
	if err := s.pool.QueryRow(ctx, listSummarySQL(purchaseFromSQL(f.And())), f.Args()...).
		Scan(&out.Total, &out.Amount); err != nil {
		return Listing{}, fmt.Errorf("list purchases: %w", err)
	}

	// The summary covers every match; only the page starts after the cursor.
	offset := q.Offset
	if a := q.after; a != nil {
		offset = 0
		f.Where(order.After(f, a.Keys, a.ID))
	}
	// One row more than the page says whether another page follows, exactly,
	// even while new purchases arrive.
	sql := listPageSQL(similarity, purchaseFromSQL(f.And()), order.By(), f.Limit(q.Limit), f.Arg(offset))
	rows, err := s.pool.Query(ctx, sql, f.Args()...)
	if err != nil {
		return Listing{}, fmt.Errorf("list purchases: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sim *float64
		r, err := scanRecord(rows, &sim)
		if err != nil {
			return Listing{}, fmt.Errorf("list purchases: %w", err)
		}
		r.Similarity = sim
		r.DownloadRevoked = r.DownloadRevoked || r.LicenseRevoked
		if !r.DownloadRevoked {
			r.Download = s.links.Sign(r.PurchaseID)
		}
		out.Purchases = append(out.Purchases, r)
	}
	if err := rows.Err(); err != nil {
		return Listing{}, fmt.Errorf("list purchases: %w", err)
	}
	out.Purchases, out.HasMore, out.NextCursor = paging.Page(out.Purchases, q.Limit, func(last PurchaseRecord) paging.Cursor {
		return q.nextCursor(last, q.Offset+q.Limit)
	})
	return out, nil
}

// prefixQuery turns "laugh car" into "laugh:* & car:*" so that a word
// typed in part still matches; only letters and digits pass.
func prefixQuery(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 || len(words) > 16 {
		return ""
	}
	for i, w := range words {
		words[i] = w + ":*"
	}
	return strings.Join(words, " & ")
}
