package imports

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/money"
)

// Service imports clips into the catalog: it validates them against the
// tiers and the files they name, copies their files into media storage and
// writes them, with their jobs in the job outbox, through the catalog's
// door (catalog.Service's Commit, RecordJobs and Relay), as the catalog's
// own writes do.
type Service struct {
	cat   *catalog.Service
	pool  *pgxpool.Pool
	media media.Store
	// uploads are the files an import may name by upload_id.
	uploads *media.Uploads
	queue   catalog.EmbedQueue
}

// New returns the import of cat's clips.
func New(cat *catalog.Service) *Service {
	return &Service{cat: cat, pool: cat.Pool(), media: cat.Media(), uploads: cat.Uploads(), queue: cat.Queue()}
}

// tierPrices maps tier names to prices, for validating imported clips.
func (s *Service) tierPrices(ctx context.Context) (map[string]money.Cents, error) {
	tiers, err := s.cat.ListTiers(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]money.Cents, len(tiers))
	for _, t := range tiers {
		m[t.Name] = t.PriceCents
	}
	return m, nil
}
