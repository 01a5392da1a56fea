package search

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
)

// NotEmbeddedRetryAfter is the Retry-After, in seconds, of a clip whose
// vector is not ready: the worker embeds a new or changed clip within
// seconds of its media passing the probe.
const NotEmbeddedRetryAfter = 5

// queryVector is the vector a query matched by meaning is compared with,
// and its model. For q.SemanticSearch it is the text's embedding; for
// q.SimilarTo no vector travels: the statements read the clip's own
// (vectorSQL), and only the model is the query embedder's, the one the
// catalog's current vectors are made with. Nil for a query not matched by
// meaning.
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
		if qe == nil {
			return nil, "", apperr.New(apperr.Unavailable, "similar clips are not available on this server (it has no embedding model)")
		}
		return nil, qe.Model(), nil
	}
	return nil, "", nil
}

// clipSource is the clip whose stored vector is a query's (SimilarTo),
// checked in the page's own round trip: it must be on sale (not retired,
// its media sound) and have a ready vector of model.
type clipSource struct {
	id    uuid.UUID
	model string
}

func (c clipSource) statement() statement {
	return statement{sql: sqlClipState, args: []any{c.id, c.model}}
}

// check reads the clip's state: no row (database.NoRows) for a clip nobody can see
// (catalog.Read then asks the primary, where a clip imported a moment ago
// is found; Search makes it not_found), not_embedded for one whose vector
// is pending, failed or of another model (a re-embedding under way).
func (c clipSource) check(r pgx.Row) error {
	var ready bool
	if err := r.Scan(&ready); err != nil {
		return err
	}
	if !ready {
		return apperr.New(apperr.NotEmbedded, "video %s has no vector of the current model yet (the worker "+
			"embeds new and changed clips shortly after import); retry later", c.id).
			With("retry_after_seconds", NotEmbeddedRetryAfter)
	}
	return nil
}

// CheckSimilarTo refuses "more like" the nil UUID as the clip it names:
// no clip has it (ids are random), and Query.SimilarTo cannot tell it from
// no clip at all, so the query would be the catalog's plain list.
func CheckSimilarTo(id uuid.UUID) error {
	if id == uuid.Nil {
		return apperr.NotFoundf("video %s not found", id)
	}
	return nil
}

// clipNotFound turns a clip source's missing row into not_found.
func clipNotFound(q Query, err error) error {
	if q.SimilarTo != uuid.Nil && database.NoRows(err) {
		return apperr.NotFoundf("video %s not found", q.SimilarTo)
	}
	return err
}
