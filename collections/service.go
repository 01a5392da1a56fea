package collections

import (
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing"
	"broll/catalog"
	"broll/internal/money"
	"broll/internal/paging"
)

// The caps of issue 43: per key and per collection.
const (
	// MaxCollectionsPerKey is how many collections one key may hold.
	MaxCollectionsPerKey = 1000
	// MaxItemsPerCollection is how many clips one collection may hold.
	MaxItemsPerCollection = 5000
	// MaxItemsPerAdd bounds the video_ids of one add.
	MaxItemsPerAdd = 50
	// MaxDescriptionLen is the longest description, in characters.
	MaxDescriptionLen = 2000
	// DefaultPageSize and MaxPageSize are the limits of the collection
	// list and of the items page; DefaultItemsPageSize the items page's
	// default, the catalog list's (20 clips).
	DefaultPageSize      = 50
	DefaultItemsPageSize = 20
	MaxPageSize          = 100
	// DefaultRetention is how long a revoked key's collections stay
	// readable by its root before the sweep removes them
	// (BROLL_COLLECTION_RETENTION): the statement period, a month and its
	// grace days.
	DefaultRetention = 35 * 24 * time.Hour
)

// Service is the collections store.
type Service struct {
	pool    *pgxpool.Pool
	billing *billing.Service
	opts    ServiceOptions
}

// ServiceOptions are a collections service's settings.
type ServiceOptions struct {
	// Retention is how long a revoked key's collections are kept
	// (SweepRevoked); zero is DefaultRetention.
	Retention time.Duration
	// Videos reads the clips of an items page (catalog.Service's
	// ScanListed, from the node's copies where it has them); nil decodes
	// every row (catalog.ReadListed).
	Videos ListedScanner
}

// ListedScanner reads a clip from a row of catalog.ListedColumns followed
// by a similarity and extra columns.
type ListedScanner interface {
	ScanListed(r pgx.CollectableRow, extra ...any) (catalog.Video, error)
}

// New is the collections service over pool, buying through b (billing's
// one purchase statement).
func New(pool *pgxpool.Pool, b *billing.Service, opts ServiceOptions) *Service {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	return &Service{pool: pool, billing: b, opts: opts}
}

// Retention is how long a revoked key's collections are kept.
func (s *Service) Retention() time.Duration { return s.opts.Retention }

// Collection is one shortlist, as its readers see it.
type Collection struct {
	ID          uuid.UUID `db:"id"`
	KeyID       uuid.UUID `db:"api_key_id"`
	Name        string    `db:"name"`
	Description *string   `db:"description"`
	ItemCount   int       `db:"item_count"`
	Livemode    bool      `db:"livemode"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// CreateRequest is a new collection's name (1-200 characters) and its
// optional description.
type CreateRequest struct {
	Name        string
	Description *string
}

// Patch changes a collection's name and description: a nil Name keeps
// it; DescriptionSet with a nil Description clears it.
type Patch struct {
	Name           *string
	Description    *string
	DescriptionSet bool
}

// ListQuery is a page of the collections a key sees, newest first.
type ListQuery struct {
	// KeyID narrows a root key's list to one key of its family (its own
	// or a customer's); uuid.Nil: every collection it sees.
	KeyID  uuid.UUID
	Limit  int // 0: DefaultPageSize; clamped to MaxPageSize
	Cursor string
}

// Page is a page of collections.
type Page struct {
	Collections []Collection
	HasMore     bool
	NextCursor  string // "" on the last page
}

// ItemsQuery is a page of a collection's items, in the order added.
type ItemsQuery struct {
	Limit  int // 0: DefaultItemsPageSize; clamped to MaxPageSize
	Cursor string
}

// ItemsPage is a page of a collection's items: the clips as the catalog
// reads them (catalog.Video, RetiredAt set on retired ones), for the
// adapter to render for the calling key.
type ItemsPage struct {
	Items      []Item
	HasMore    bool
	NextCursor string
}

// Item is one clip of a collection: the clip and when it was added.
type Item struct {
	Video   catalog.Video
	AddedAt time.Time
	// position is the item's place in the order added (the keyset).
	position int64
}

// BuyRequest buys a collection whole.
type BuyRequest struct {
	CollectionID  uuid.UUID
	ExpectedTotal *money.Cents
	DryRun        bool
	// RetryKey is the request's Idempotency-Key (billing.PurchaseRequest):
	// a clip this very request bought in an earlier run is bought again in
	// the answer, not skipped as already owned.
	RetryKey string
}

// Skip reasons: why a clip of a bought collection was not bought.
const (
	SkipRetired      = "retired"
	SkipUnavailable  = "unavailable"
	SkipAlreadyOwned = "already_owned"
)

// Skipped is a clip of a bought collection that was not charged.
type Skipped struct {
	VideoID uuid.UUID
	Reason  string
}

// BuyResult is billing's answer for the clips bought, and the clips
// skipped.
type BuyResult struct {
	billing.PurchaseResult
	Skipped []Skipped
}

// ListBounds are the paging limits of the collection list, for the
// adapters to read a request's paging with: keyset only, DefaultPageSize
// by default, a larger limit than MaxPageSize clamped.
var ListBounds = paging.Bounds{DefaultLimit: DefaultPageSize, MaxLimit: MaxPageSize, Window: MaxPageSize, NoOffset: true}

// ItemsBounds are those of a collection's items: DefaultItemsPageSize by
// default, as the catalog list.
var ItemsBounds = paging.Bounds{DefaultLimit: DefaultItemsPageSize, MaxLimit: MaxPageSize, Window: MaxPageSize, NoOffset: true}
