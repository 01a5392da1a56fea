package mediajobs

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/database"
)

// Service runs the media jobs of the catalog's clips: the first probe of
// a clip's file (one clip or a batch), its preview and thumbnail, and
// reprobing. It writes clips through the catalog's door (catalog.Service's
// Commit, InTx, RecordJobs and Relay), as the catalog's own writes do.
type Service struct {
	cat   *catalog.Service
	pool  *pgxpool.Pool
	media media.Store
	queue catalog.EmbedQueue
}

// New returns the media jobs of cat's clips.
func New(cat *catalog.Service) *Service {
	return &Service{cat: cat, pool: cat.Pool(), media: cat.Media(), queue: cat.Queue()}
}

// Kinds of job this package records.
const (
	jobEmbed    = catalog.JobEmbed
	jobPreviews = catalog.JobPreviews
	jobReprobe  = catalog.JobReprobe
)

func (s *Service) commit(ctx context.Context, tx pgx.Tx) error { return s.cat.Commit(ctx, tx) }

func (s *Service) inTx(ctx context.Context, fn func(pgx.Tx) error) error { return s.cat.InTx(ctx, fn) }

func (s *Service) relay(ctx context.Context, jobs []int64) (int, error) {
	return s.cat.Relay(ctx, jobs)
}

func recordJobs(ctx context.Context, q database.Queryer, kind string, ids []uuid.UUID) ([]int64, error) {
	return catalog.RecordJobs(ctx, q, kind, ids)
}

func (s *Service) putFile(ctx context.Context, key, path string) (int64, error) {
	return media.PutFile(ctx, s.media, key, path)
}
