package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"broll/catalog/media"
	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/replica"
	"broll/internal/telemetry"
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
	// against the request's pass or the primary on each read (VideoForKey).
	videos *videoCache
	owned  *ownedCache
	// ownedSets are the clips each key owns (owned_sets.go).
	ownedSets *ownedSets
	// admission is held across every write of a clip's row, so that no
	// node trusts a copy the write made stale; nil: no node trusts any.
	admission admission.Door
	// tracer starts the spans of the job outbox's relays.
	tracer trace.Tracer
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
	// Admission is told of every change to a clip (admission.Catalog);
	// nil: nothing, for services without Redis, whose nodes trust no copy
	// without asking Postgres.
	Admission admission.Door
	// Telemetry traces the relays of the job outbox; nil traces none.
	Telemetry *telemetry.Provider
}

// NewService returns the catalog as o says.
func NewService(o ServiceOptions) *Service {
	return &Service{pool: o.Pool, reads: o.Reads, media: o.Media, uploads: o.Uploads,
		queue: o.Queue, videos: newVideoCache(), owned: newOwnedCache(), ownedSets: newOwnedSets(), admission: o.Admission,
		tracer: o.Telemetry.Tracer("broll/catalog")}
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
