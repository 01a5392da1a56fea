package database_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"broll/internal/database"
	"broll/internal/testkit"
)

// TestMigrateBackfillsHalfVectors: a catalog embedded before migration
// 00031 gets a stored halfvec for each of its vectors, equal to the one the
// expression graphs held, and semantic searches walk the new graphs.
func TestMigrateBackfillsHalfVectors(t *testing.T) {
	t.Parallel()
	url, db := testkit.DatabaseAt(t, 30)
	ctx := context.Background()
	// Twenty clips with vectors, one without, as that release wrote them.
	if _, err := db.ExecContext(ctx, `
		INSERT INTO videos (title, emotion, gender, difficulty, media_key, media_status,
		                    embedding, embedding_model, embedding_status)
		SELECT 'clip ' || i, 'happy', 'female', 'easy', 'media/' || i, 'ready',
		       (SELECT array_agg(sin(i * 31 + d))::real[] FROM generate_series(1, 768) d)::vector,
		       'm', 'ready'
		FROM generate_series(1, 20) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `
		INSERT INTO videos (title, emotion, gender, difficulty, media_key, media_status)
		VALUES ('no vector yet', 'sad', 'male', 'easy', 'media/x', 'ready')`); err != nil {
		t.Fatal(err)
	}
	if _, err := database.Migrate(ctx, url, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate from the release before 00031: %v", err)
	}
	var halved, unequal int
	if err := db.QueryRowContext(ctx, `
		SELECT count(embedding_half), count(*) FILTER (WHERE embedding_half IS DISTINCT FROM embedding::halfvec(768))
		FROM videos`).Scan(&halved, &unequal); err != nil {
		t.Fatal(err)
	}
	if halved != 20 || unequal != 0 {
		t.Fatalf("%d clips with a halfvec, %d unequal to their vector; want 20 and 0", halved, unequal)
	}
	pool, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var plan []string
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			return err
		}
		var err error
		plan, err = database.Select(ctx, tx, pgx.RowTo[string], `
			EXPLAIN SELECT id FROM videos
			ORDER BY embedding_half <=> (SELECT embedding_half FROM videos WHERE title = 'clip 1') LIMIT 5`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "Index Scan using videos_half_hnsw on") {
		t.Fatalf("the search does not walk videos_half_hnsw:\n%v", plan)
	}
}
