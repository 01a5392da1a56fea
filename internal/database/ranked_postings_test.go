package database_test

import (
	"context"
	"log/slog"
	"testing"

	"broll/internal/database"
	"broll/internal/testkit"
)

// TestMigrateGivesPostingsTheirRank: a catalog whose keyword postings
// hold stripped documents (00015) gets each posting's clip's whole
// search_tsv (00033), so ts_rank over a posting is the rank over the clip;
// the postings stay the same set, a retired clip still has none, and the
// triggers write whole documents from then on.
func TestMigrateGivesPostingsTheirRank(t *testing.T) {
	t.Parallel()
	url, db := testkit.DatabaseAt(t, 32)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `
		INSERT INTO videos (title, description, tags, emotion, gender, difficulty, media_key, media_status)
		SELECT 'Sunset ' || i, 'a walk on the beach at sunset, take ' || i, ARRAY['beach', 'evening'],
		       'happy', 'female', 'easy', 'media/' || i, 'ready'
		FROM generate_series(1, 10) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE videos SET retired_at = now() WHERE title = 'Sunset 10'`); err != nil {
		t.Fatal(err)
	}
	counts := func() (postings, stripped, whole int) {
		t.Helper()
		if err := db.QueryRowContext(ctx, `
			SELECT count(*), count(*) FILTER (WHERE t.doc = strip(v.search_tsv)),
			       count(*) FILTER (WHERE t.doc = v.search_tsv)
			FROM video_terms t JOIN videos v ON v.id = t.video_id`).Scan(&postings, &stripped, &whole); err != nil {
			t.Fatal(err)
		}
		return postings, stripped, whole
	}
	before, stripped, _ := counts()
	if before == 0 || stripped != before {
		t.Fatalf("fixture: %d postings, %d of them stripped", before, stripped)
	}
	if _, err := database.Migrate(ctx, url, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate from the release before 00033: %v", err)
	}
	if n, _, whole := counts(); n != before || whole != n {
		t.Fatalf("after migrating: %d postings (before %d), %d with the clip's whole document", n, before, whole)
	}
	var retired int
	if err := db.QueryRowContext(ctx, `
		SELECT count(*) FROM video_terms t JOIN videos v ON v.id = t.video_id WHERE v.retired_at IS NOT NULL`).Scan(&retired); err != nil || retired != 0 {
		t.Fatalf("a retired clip has %d postings (%v)", retired, err)
	}
	// The triggers, on a new clip and on a changed one.
	if _, err := db.ExecContext(ctx, `
		INSERT INTO videos (title, emotion, gender, difficulty, media_key, media_status)
		VALUES ('Sunrise over the harbour', 'happy', 'male', 'easy', 'media/new', 'ready')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE videos SET title = 'Sunset, sunset' WHERE title = 'Sunset 1'`); err != nil {
		t.Fatal(err)
	}
	if n, _, whole := counts(); whole != n || n <= before {
		t.Fatalf("after writes: %d postings, %d with the clip's whole document", n, whole)
	}
}
