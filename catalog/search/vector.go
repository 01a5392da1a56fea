package search

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"broll/internal/apperr"
)

// NotEmbeddedRetryAfter is the Retry-After, in seconds, of a clip whose
// vector is not ready: the worker embeds a new or changed clip within
// seconds of its media passing the probe.
const NotEmbeddedRetryAfter = 5

// queryVector is the vector a query matched by meaning is compared with,
// and its model: the embedding of q.SemanticSearch, or the stored vector
// of the clip q.SimilarTo. Nil for a query not matched by meaning.
func (s *Service) queryVector(ctx context.Context, q Query, qe QueryEmbedder) ([]float32, string, error) {
	switch {
	case q.SemanticSearch != "":
		if qe == nil {
			return nil, "", apperr.New(apperr.Unavailable, "semantic search is not available on this server; use search")
		}
		v, err := qe.EmbedQuery(ctx, q.SemanticSearch)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			return nil, "", apperr.New(apperr.Unavailable,
				"semantic search is unavailable right now (the embedding model did not answer); retry later or use search")
		}
		return v, qe.Model(), nil
	case q.SimilarTo != uuid.Nil:
		// The current model is the one queries are embedded with: only
		// a vector of it is comparable with the catalog's.
		if qe == nil {
			return nil, "", apperr.New(apperr.Unavailable, "similar clips are not available on this server (it has no embedding model)")
		}
		v, err := s.clipVector(ctx, q.SimilarTo, qe.Model())
		return v, qe.Model(), err
	}
	return nil, "", nil
}

// clipVector is the stored vector of clip id, which must be on sale (not
// retired, its media sound) and have a ready vector of model. A clip
// nobody can see is not_found; one whose vector is pending, failed or of
// another model (a re-embedding under way) is not_embedded, worth a retry.
func (s *Service) clipVector(ctx context.Context, id uuid.UUID, model string) ([]float32, error) {
	var status string
	var vecModel *string
	var vec *pgvector.Vector
	// Not found on a replica is asked again of the primary (Read): a clip
	// imported a moment ago is found.
	err := s.catalog.Read(ctx, false, func(db *pgxpool.Pool) error {
		return db.QueryRow(ctx, sqlClipVector, id).Scan(&status, &vecModel, &vec)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.NotFoundf("video %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("similar: %w", err)
	}
	if status != "ready" || vec == nil || vecModel == nil || *vecModel != model {
		return nil, apperr.New(apperr.NotEmbedded, "video %s has no vector of the current model yet (the worker "+
			"embeds new and changed clips shortly after import); retry later", id).
			With("retry_after_seconds", NotEmbeddedRetryAfter)
	}
	return vec.Slice(), nil
}
