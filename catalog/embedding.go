package catalog

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"broll/internal/database"
	"broll/internal/outbox"
)

// EmbedInput is the text of one clip that its embedding is made from.
type EmbedInput struct {
	ID   uuid.UUID
	Text string
	// ReadyWith names the model of the clip's vector when it is ready and
	// its text has not changed since ("" otherwise): a worker running that
	// model has nothing to do for it.
	ReadyWith string
}

// Embedding is a vector made by a model for one clip.
type Embedding struct {
	ID     uuid.UUID
	Vector []float32
}

// EmbeddingInputs returns the document text of the given clips (retired ones
// included: they stay in purchase history and its semantic search).
func (s *Service) EmbeddingInputs(ctx context.Context, ids []uuid.UUID) ([]EmbedInput, error) {
	return database.Select(ctx, s.pool, func(r pgx.CollectableRow) (EmbedInput, error) {
		var in EmbedInput
		var title, desc, emotion, gender, age, loc, media, orient, model string
		var tags []string
		if err := r.Scan(&in.ID, &title, &desc, &tags, &emotion, &gender, &age, &loc, &media, &orient, &model, &in.ReadyWith); err != nil {
			return in, err
		}
		in.Text = DocumentText(title, desc, tags, emotion, gender, age, loc, media, orient)
		return in, nil
	}, sqlEmbeddingInputs, ids)
}

// DocumentText is the text a clip is embedded from: what a person would
// say about it, in the words a search would use.
func DocumentText(title, desc string, tags []string, emotion, gender, age, location, media, orientation string) string {
	text := title
	if desc != "" {
		text += ". " + desc
	}
	if len(tags) > 0 {
		text += ". Tags: " + strings.Join(tags, ", ")
	}
	text += ". Emotion: " + emotion + ". Person: " + strings.ReplaceAll(gender, "_", "-")
	if age != "" {
		text += ", age " + age
	}
	if location != "" {
		text += ". Location: " + location
	}
	if orientation != "" {
		text += ". " + orientation + " " + media
	}
	return text
}

// StoreEmbeddings writes vectors made by model and marks the clips ready.
func (s *Service) StoreEmbeddings(ctx context.Context, model string, embs []Embedding) error {
	batch := &pgx.Batch{}
	ids := make([]uuid.UUID, len(embs))
	for i, e := range embs {
		ids[i] = e.ID
		batch.Queue(sqlStoreEmbedding, e.ID, pgvector.NewVector(e.Vector), model)
	}
	// The event rides in the same batch, whose single Sync makes it one
	// implicit transaction with the updates: it exists exactly when they do.
	batch.Queue(sqlClipsEmbeddedEvent, outbox.ClipsEmbedded, ids, model, outbox.Trace(ctx))
	return s.pool.SendBatch(ctx, batch).Close()
}

// MarkEmbeddingFailed records that a clip's embedding gave up after its last
// retry; `brollctl clips reembed --failed` queues it again.
func (s *Service) MarkEmbeddingFailed(ctx context.Context, id uuid.UUID, reason string) error {
	_, err := s.pool.Exec(ctx, sqlMarkEmbeddingFailed, id, reason[:min(len(reason), 500)])
	return err
}
