// Package catalogtest is the test kit of the catalog's readers: a fresh
// catalog (New), a small imported one whose every clip's input is kept
// (NewFixture: what search, clip details and retirement are tested over),
// and MediaPassed, which puts imported clips on sale for tests whose
// subject is not media processing (search, purchases, downloads). Their
// media files are a few bytes standing in for a video, which the real
// probe would rightly refuse; the probe and the rule that only sound media
// is sold have tests of their own, over real files and the real probe
// (api TestOnlySoundMediaIsSold, worker TestWorkerProbesImportedClips).
package catalogtest

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MediaPassed records the clips' media as passed by the probe, as the
// worker's media job records a file that passed it (catalog sqlMediaDone):
// ready, and on sale unless retired. With no ids, every clip whose media
// is pending. Clips whose media failed are left failed.
func MediaPassed(t testing.TB, pool *pgxpool.Pool, ids ...uuid.UUID) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `
		UPDATE videos SET media_status = 'ready', media_error = NULL, media_processed_at = now(),
		       retired_at = nullif(retired_at, 'infinity'::timestamptz)
		WHERE media_status = 'pending' AND (coalesce(cardinality($1::uuid[]), 0) = 0 OR id = ANY ($1))`, ids)
	if err != nil {
		t.Fatalf("media passed: %v", err)
	}
}
