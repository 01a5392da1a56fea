package demo

import (
	"testing"

	"broll/catalog/catalogtest"
	"broll/catalog/search"
	"broll/graph/graphtest"
)

// TestSeedDemoIsOnSaleAtOnce: the demo seed probes its media files itself
// (they pass: real MP4s and JPEGs), so `make run` shows the demo catalog
// as soon as the seed ends, without waiting for a worker, and queues no
// media job for it.
func TestSeedDemoIsOnSaleAtOnce(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, countingQueue{})
	if _, err := Seed(b.Ctx, b.Cat, 40, 7); err != nil {
		t.Fatal(err)
	}
	if n := b.Count(t, `SELECT count(*) FROM videos WHERE media_status <> 'ready' OR retired_at IS NOT NULL`); n != 0 {
		t.Fatalf("%d seeded clips are not on sale", n)
	}
	page, err := graphtest.Over(t, b.Pool).Search.Search(b.Ctx, search.Query{Limit: 100}, nil)
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
