package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/marks"
	"broll/internal/replica"
)

// Service is the catalog store.
type Service struct {
	pool  *pgxpool.Pool
	media media.Store
	// uploads are the files an import may name by upload_id.
	uploads *media.Uploads
	queue   EmbedQueue
	// reads picks the pool of the catalog reads that may be a moment old
	// (lists, filter values); nil: the primary.
	reads *replica.Reads
	// videos keeps clip details and owned which clips keys own, checked
	// against the marks or the primary on each read (VideoForKey).
	videos *videoCache
	owned  *ownedCache
	// marks tells every node that a clip changed (package marks).
	marks *marks.Marks
}

// ServiceOptions are what a catalog is built from. Pool is required; the zero
// value of every other field is usable.
type ServiceOptions struct {
	// Pool is the primary: writes, and the reads that must see them.
	Pool *pgxpool.Pool
	// Reads picks the pool of the reads that may be a moment old (a read
	// replica while it keeps up, BROLL_DATABASE_READ_URL); nil: Pool.
	Reads *replica.Reads
	// Media stores the clips' files; nil where nothing reads or writes them.
	Media media.Store
	// Queue queues embeddings and media jobs; nil: clips stay pending until
	// `clips reembed`.
	Queue EmbedQueue
	// Uploads are the files ops keys upload for an import, which an import
	// may name; nil where nothing is uploaded (no media store).
	Uploads *media.Uploads
	// Marks are where a change to a clip is made known to every node's
	// copies (marks.Catalog); nil: nowhere, for a graph without Redis,
	// whose nodes trust no mark.
	Marks *marks.Marks
}

// NewService returns the catalog as o says.
func NewService(o ServiceOptions) *Service {
	return &Service{pool: o.Pool, reads: o.Reads, media: o.Media, uploads: o.Uploads,
		queue: o.Queue, videos: newVideoCache(), owned: newOwnedCache(), marks: o.Marks}
}

// Read runs fn on the pool catalog reads go to (package search reads
// through it too). A read that failed on the
// replica runs again on the primary, and so does one that found nothing
// when found says it should have (a clip written a moment ago): a replica
// in trouble never refuses a read. mine marks a read that depends on the
// caller's own writes (ownership), which goes to the primary.
func (s *Service) Read(ctx context.Context, mine bool, fn func(db *pgxpool.Pool) error) error {
	if s.reads == nil || mine {
		return fn(s.pool)
	}
	db := s.reads.Pool()
	err := fn(db)
	if err == nil || !s.reads.IsReplica(db) || ctx.Err() != nil {
		return err
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	if !database.NoRows(err) {
		s.reads.Failed(err)
	}
	return fn(s.pool)
}
