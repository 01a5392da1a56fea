package database_test

import (
	"context"
	"log/slog"
	"testing"

	"broll/internal/database"
	"broll/internal/testkit"
)

// TestMigrateRemovesPostingsOfDeletedClips: postings that deletes of
// clips left behind before 00035 are gone after it, and from then on a
// deleted clip, alone or with others in one statement, takes its postings
// with it, whatever else it shares words with.
func TestMigrateRemovesPostingsOfDeletedClips(t *testing.T) {
	t.Parallel()
	url, db := testkit.DatabaseAt(t, 34)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `
		INSERT INTO videos (title, description, emotion, gender, difficulty, media_key, media_status)
		SELECT 'Sunset ' || i, 'a walk on the beach, take ' || i, 'happy', 'female', 'easy', 'media/' || i, 'ready'
		FROM generate_series(1, 10) i`); err != nil {
		t.Fatal(err)
	}
	count := counter(t, db)
	const orphans = `SELECT count(*) FROM video_terms t WHERE NOT EXISTS (SELECT 1 FROM videos v WHERE v.id = t.video_id)`
	const postings = `SELECT count(*) FROM video_terms`
	if _, err := db.ExecContext(ctx, `DELETE FROM videos WHERE title IN ('Sunset 1', 'Sunset 2')`); err != nil {
		t.Fatal(err)
	}
	if n := count(orphans); n == 0 {
		t.Fatal("fixture: the release before left no postings behind")
	}
	if _, err := database.Migrate(ctx, url, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if n := count(orphans); n != 0 {
		t.Fatalf("%d postings without a clip after the migration", n)
	}
	kept := count(postings)
	perClip := count(`SELECT count(*) FROM video_terms t JOIN videos v ON v.id = t.video_id WHERE v.title = 'Sunset 3'`)
	for _, del := range []string{
		`DELETE FROM videos WHERE title = 'Sunset 3'`,
		`DELETE FROM videos WHERE title IN ('Sunset 4', 'Sunset 5', 'Sunset 6')`,
	} {
		if _, err := db.ExecContext(ctx, del); err != nil {
			t.Fatal(err)
		}
	}
	// A retired clip has no postings; deleting it removes nothing else.
	if _, err := db.ExecContext(ctx, `UPDATE videos SET retired_at = now() WHERE title = 'Sunset 7'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM videos WHERE title = 'Sunset 7'`); err != nil {
		t.Fatal(err)
	}
	if n := count(orphans); n != 0 {
		t.Fatalf("%d postings without a clip after deletes", n)
	}
	if got, want := count(postings), kept-5*perClip; got != want {
		t.Fatalf("%d postings after deleting four live clips and a retired one, want %d", got, want)
	}
}
