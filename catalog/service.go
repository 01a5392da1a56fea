package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog/media"
	"broll/internal/apperr"
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
	// videos keeps clip details, checked against the primary on each read
	// (VideoForKey).
	videos *videoCache
}

// New returns the catalog over pool, storing clip files in store and
// queueing embeddings on queue (nil: clips stay pending until `clips reembed`).
func New(pool *pgxpool.Pool, store media.Store, queue EmbedQueue) *Service {
	return &Service{pool: pool, media: store, uploads: media.NewUploads(pool, store), queue: queue, videos: newVideoCache()}
}

// WithReads returns the catalog sending its reads through reads (a read
// replica while it keeps up); writes, and reads that must see the caller's
// own writes, stay on the primary.
func (s *Service) WithReads(reads *replica.Reads) *Service {
	c := *s
	c.reads = reads
	return &c
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
	if !errors.Is(err, pgx.ErrNoRows) {
		s.reads.Failed(err)
	}
	return fn(s.pool)
}
