package catalog

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog/media"
	"broll/internal/database"
)

// The door through which the packages doing the catalog's jobs (packages
// mediajobs and imports) write clips: the same primary, files, queue, admission and job
// outbox as the catalog's own writes, so that a clip's row changes one way.

// Kinds of job in the outbox, for the packages that record them.
const (
	JobEmbed    = jobEmbed
	JobMedia    = jobMedia
	JobPreviews = jobPreviews
	JobReprobe  = jobReprobe
)

// Pool is the primary.
func (s *Service) Pool() *pgxpool.Pool { return s.pool }

// Media stores the clips' files; nil where nothing reads or writes them.
func (s *Service) Media() media.Store { return s.media }

// Queue queues embeddings and media jobs; nil: none.
func (s *Service) Queue() EmbedQueue { return s.queue }

// Commit commits tx, a write of clips, with the catalog held (commit).
func (s *Service) Commit(ctx context.Context, tx pgx.Tx) error { return s.commit(ctx, tx) }

// InTx runs fn in a transaction that commits through Commit.
func (s *Service) InTx(ctx context.Context, fn func(pgx.Tx) error) error { return s.inTx(ctx, fn) }

// RecordJobs records one job of kind per clip in the outbox, in q's
// transaction, and returns the jobs' ids (recordJobs).
func RecordJobs(ctx context.Context, q database.Queryer, kind string, ids []uuid.UUID) ([]int64, error) {
	return recordJobs(ctx, q, kind, ids)
}

// Relay hands the jobs given to the queue after their commit (relay).
func (s *Service) Relay(ctx context.Context, jobs []int64) (int, error) { return s.relay(ctx, jobs) }

// Uploads are the files an import may name by upload_id; nil where nothing
// is uploaded.
func (s *Service) Uploads() *media.Uploads { return s.uploads }
