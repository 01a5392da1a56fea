package demo

import (
	"testing"

	"broll/catalog/catalogtest"
	"broll/catalog/search"
	"broll/wiring/wiringtest"
)

// TestSeedDemoIsOnSaleAtOnce: the demo seed probes its media files itself
// (they pass: real MP4s and JPEGs), so `make run` shows the demo catalog
// as soon as the seed ends, without waiting for a worker, and queues no
// media job for it.
func TestSeedDemoIsOnSaleAtOnce(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, countingQueue{})
	if _, err := Seed(b.Ctx, b.Cat, b.Imports, 40, 7); err != nil {
		t.Fatal(err)
	}
	if n := b.Count(t, `SELECT count(*) FROM videos WHERE media_status <> 'ready' OR retired_at IS NOT NULL`); n != 0 {
		t.Fatalf("%d seeded clips are not on sale", n)
	}
	page, err := wiringtest.Over(t, b.Pool).Search.Search(b.Ctx, search.Query{Limit: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Videos) != 40 {
		t.Fatalf("the list shows %d of 40 seeded clips", len(page.Videos))
	}
	if n := b.Count(t, `SELECT count(*) FROM videos WHERE media_processed_at IS NULL OR width IS NULL`); n != 0 {
		t.Fatalf("%d seeded clips without the probe's record", n)
	}
}

// TestSeedDemoListingsMatchTheirFiles: every seeded line states the
// figures of its own file, so the probe finds nothing to correct: the
// mismatch report of the demo catalog is empty. The lines do state them
// (the report is not empty for want of figures), with a spread of
// durations for the duration filters to work on.
func TestSeedDemoListingsMatchTheirFiles(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, countingQueue{})
	if _, err := Seed(b.Ctx, b.Cat, b.Imports, 120, 11); err != nil {
		t.Fatal(err)
	}
	st, err := b.Cat.Status(b.Ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if st.Media.Mismatched != 0 || len(st.Media.MismatchedClips) != 0 {
		t.Fatalf("%d demo clips disagree with their files, e.g. %+v", st.Media.Mismatched, st.Media.MismatchedClips)
	}
	if n := b.Count(t, `SELECT count(*) FROM videos WHERE NOT (listed_media ?& array['width', 'height', 'orientation'])
		OR (media_type = 'video' AND NOT (listed_media ?& array['duration_seconds', 'fps']))`); n != 0 {
		t.Fatalf("%d demo lines leave figures out", n)
	}
	if n := b.Count(t, `SELECT count(DISTINCT duration_seconds) FROM videos WHERE media_type = 'video'`); n < 3 {
		t.Fatalf("demo videos have %d distinct durations, want a spread", n)
	}
}
