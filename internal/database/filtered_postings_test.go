package database_test

import (
	"context"
	"log/slog"
	"testing"

	"broll/internal/database"
	"broll/internal/testkit"
)

// stalePostingsSQL counts the keyword postings whose filter columns are
// not their clip's.
const stalePostingsSQL = `
	SELECT count(*) FROM video_terms t JOIN videos v ON v.id = t.video_id
	WHERE (t.emotion, t.gender, t.age_range, t.location, t.media_type, t.orientation, t.difficulty, t.model_id,
	       t.duration_seconds, t.virality_score)
	      IS DISTINCT FROM (v.emotion, v.gender, v.age_range, v.location, v.media_type, v.orientation, v.difficulty,
	       v.model_id, v.duration_seconds, v.virality_score)`

// TestMigrateGivesPostingsTheFilters: a catalog whose keyword postings
// hold words alone (00033) gets, in each posting, what searches filter its
// clip by (00034): the same postings, none for a retired clip, each with
// its clip's values, NULLs included; and the triggers keep them so when a
// clip is added, when only a filtered column changes, and when its words do.
func TestMigrateGivesPostingsTheFilters(t *testing.T) {
	t.Parallel()
	url, db := testkit.DatabaseAt(t, 33)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `
		INSERT INTO videos (title, description, tags, emotion, gender, age_range, location, orientation, difficulty,
		                    model_id, duration_seconds, virality_score, media_key, media_status)
		SELECT 'Sunset ' || i, 'a walk on the beach at sunset, take ' || i, ARRAY['beach', 'evening'],
		       CASE WHEN i % 2 = 0 THEN 'happy' ELSE 'sad' END, 'female',
		       CASE WHEN i % 3 = 0 THEN '25-34' END, CASE WHEN i % 4 = 0 THEN 'lisbon' END,
		       CASE WHEN i % 5 = 0 THEN 'vertical' END, 'easy', CASE WHEN i % 2 = 1 THEN 'model-' || i END,
		       CASE WHEN i % 3 = 1 THEN i * 1.5 END, CASE WHEN i % 4 = 1 THEN i * 7 END, 'media/' || i, 'ready'
		FROM generate_series(1, 12) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE videos SET retired_at = now() WHERE title = 'Sunset 12'`); err != nil {
		t.Fatal(err)
	}
	count := counter(t, db)
	const postings = `SELECT count(*) FROM video_terms`
	before := count(postings)
	if before == 0 {
		t.Fatal("fixture: no postings")
	}
	if _, err := database.Migrate(ctx, url, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate from the release before 00034: %v", err)
	}
	if n := count(postings); n != before {
		t.Fatalf("after migrating: %d postings, want %d", n, before)
	}
	if n := count(stalePostingsSQL); n != 0 {
		t.Fatalf("after migrating: %d postings without their clip's filter values", n)
	}
	if n := count(`SELECT count(*) FROM video_terms t JOIN videos v ON v.id = t.video_id WHERE v.retired_at IS NOT NULL`); n != 0 {
		t.Fatalf("a retired clip has %d postings", n)
	}
	// The triggers: a new clip, a change of filtered columns alone, a
	// change of words, a column back to NULL.
	for _, sql := range []string{
		`INSERT INTO videos (title, emotion, gender, location, difficulty, media_key, media_status)
		 VALUES ('Sunrise over the harbour', 'happy', 'male', 'oslo', 'easy', 'media/new', 'ready')`,
		`UPDATE videos SET gender = 'male', orientation = 'square', virality_score = 3 WHERE title = 'Sunset 1'`,
		`UPDATE videos SET duration_seconds = 9.5, model_id = 'model-x', difficulty = 'hard' WHERE title = 'Sunset 2'`,
		`UPDATE videos SET title = 'Sunset, sunset', age_range = '55+' WHERE title = 'Sunset 3'`,
		`UPDATE videos SET location = NULL, virality_score = NULL WHERE title = 'Sunset 4'`,
	} {
		if _, err := db.ExecContext(ctx, sql); err != nil {
			t.Fatal(err)
		}
		if n := count(stalePostingsSQL); n != 0 {
			t.Fatalf("after %s: %d postings without their clip's filter values", sql, n)
		}
	}
	if n := count(postings); n <= before {
		t.Fatalf("after writes: %d postings (before %d)", n, before)
	}
}
