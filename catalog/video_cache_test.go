package catalog_test

import (
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/internal/admission"
	"broll/internal/apperr"
)

// TestVideoCacheFollowsEveryWriter: a node's copy of a clip is used only
// while the row is the version it was read from, whoever changed the row:
// a second catalog over the same database (another node) and a plain
// UPDATE (an operator's, a migration's) are seen by the next read, and a
// row lock, which every purchase's foreign-key check takes, leaves the
// copy in use.
func TestVideoCacheFollowsEveryWriter(t *testing.T) {
	t.Parallel()
	f := catalogtest.NewFixture(t)
	id := f.ByKey["laughCouch"].ID
	other := catalogtest.Over(f.Pool, f.Media, nil) // another node: a cache of its own

	read := func(t *testing.T) catalog.Video {
		t.Helper()
		v, bought, err := f.Cat.VideoForKey(f.Ctx, id, uuid.Nil, admission.Pass{})
		if err != nil {
			t.Fatal(err)
		}
		if bought.Valid {
			t.Fatalf("nil key owns %s", id)
		}
		return v
	}
	cached := func(t *testing.T) bool {
		t.Helper()
		var version uint32
		if err := f.Pool.QueryRow(f.Ctx, `SELECT xmin FROM videos WHERE id = $1`, id).Scan(&version); err != nil {
			t.Fatal(err)
		}
		return f.Cat.CachedVideo(id, version)
	}

	if v := read(t); v.Price != 500 || v.Title != f.ByKey["laughCouch"].In.Title {
		t.Fatalf("first read: %+v", v)
	}
	if !cached(t) {
		t.Fatal("a read left no copy of the clip")
	}

	t.Run("a change through another node", func(t *testing.T) {
		if _, err := other.SetTier(f.Ctx, "easy", 650); err != nil {
			t.Fatal(err)
		}
		if v := read(t); v.Price != 650 {
			t.Errorf("price after the tier changed elsewhere: %v, want 650", v.Price)
		}
	})

	t.Run("a plain UPDATE", func(t *testing.T) {
		if _, err := f.Pool.Exec(f.Ctx, `UPDATE videos SET title = 'Renamed by hand' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		if v := read(t); v.Title != "Renamed by hand" {
			t.Errorf("title after an UPDATE: %q", v.Title)
		}
	})

	t.Run("a row lock keeps the copy", func(t *testing.T) {
		read(t)
		if _, err := f.Pool.Exec(f.Ctx, `SELECT 1 FROM videos WHERE id = $1 FOR KEY SHARE`, id); err != nil {
			t.Fatal(err)
		}
		if !cached(t) {
			t.Error("a row lock made the copy stale")
		}
	})

	t.Run("a retirement", func(t *testing.T) {
		if _, err := other.Retire(f.Ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.Cat.VideoForKey(f.Ctx, id, uuid.Nil, admission.Pass{}); apperr.CodeOf(err) != apperr.NotFound {
			t.Errorf("retired clip: %v, want not_found", err)
		}
	})
}
