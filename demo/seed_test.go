package demo

import (
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/internal/apperr"
)

func TestSeedDemoCoversTheCatalog(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, countingQueue{})
	start := time.Now()
	res, err := Seed(b.Ctx, b.Cat, b.Imports, 200, 42)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded 200 clips in %v", time.Since(start))
	if res != (imports.Result{Created: 200, Queued: 200}) {
		t.Fatalf("result = %+v", res)
	}

	distinct := func(col string) []string {
		rows, err := b.Pool.Query(b.Ctx, `SELECT DISTINCT `+col+` FROM videos WHERE `+col+` IS NOT NULL`)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return vals
	}
	covers := func(col string, want []string) {
		t.Helper()
		got := map[string]bool{}
		for _, v := range distinct(col) {
			got[v] = true
		}
		for _, w := range want {
			if !got[w] {
				t.Errorf("%s %q never seeded", col, w)
			}
		}
	}
	covers("emotion", catalog.Emotions())
	covers("gender", catalog.Genders())
	covers("age_range", catalog.AgeRanges())
	covers("orientation", catalog.Orientations())
	covers("media_type", catalog.MediaTypes())
	covers("difficulty", []string{"easy", "medium", "hard"})
	covers("location", []string{"home", "kitchen", "car", "office", "street", "cafe", "park", "gym", "beach", "bedroom"})
	if n := len(distinct("model_id")); n < 5 {
		t.Errorf("only %d creator models", n)
	}
	if n := len(distinct("title")); n < 150 {
		t.Errorf("only %d distinct titles in 200 clips", n)
	}

	// Sizes follow orientation; videos have a duration and frame rate.
	if n := b.Count(t, `SELECT count(*) FROM videos WHERE
		(orientation = 'vertical' AND width >= height) OR (orientation = 'horizontal' AND width <= height)
		OR (orientation = 'square' AND width <> height)
		OR (media_type = 'video' AND (duration_seconds IS NULL OR fps IS NULL))
		OR virality_score IS NULL OR cardinality(tags) < 3 OR description = ''`); n != 0 {
		t.Errorf("%d clips with inconsistent metadata", n)
	}

	// The stored files are what their content types say.
	var key, ctype, preview, thumb string
	err = b.Pool.QueryRow(b.Ctx, `SELECT media_key, media_content_type, preview_key, thumbnail_key
		FROM videos WHERE media_type = 'video' LIMIT 1`).Scan(&key, &ctype, &preview, &thumb)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "video/mp4" || media.ContentType(preview) != "video/mp4" || media.ContentType(thumb) != "image/jpeg" {
		t.Fatalf("content types %s %s %s", ctype, preview, thumb)
	}
	f, err := b.Media.Open(b.Ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 12)
	_, _ = io.ReadFull(f, head)
	f.Close()
	if string(head[4:8]) != "ftyp" {
		t.Fatalf("stored full file starts %q", head)
	}

	// The same seed names the same clips: seeding again updates them.
	res, err = Seed(b.Ctx, b.Cat, b.Imports, 50, 42)
	if err != nil || res != (imports.Result{Updated: 50}) {
		t.Fatalf("re-seed = %+v, %v", res, err)
	}
	if res, err = Seed(b.Ctx, b.Cat, b.Imports, 10, 7); err != nil || res.Created != 10 {
		t.Fatalf("other seed = %+v, %v", res, err)
	}

	for _, n := range []int{0, -1, MaxCount + 1} {
		if _, err := Seed(b.Ctx, b.Cat, b.Imports, n, 1); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("Seed(%d) = %v", n, err)
		}
	}
}

func TestSeedDemoThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("large seed")
	}
	t.Parallel()
	b := catalogtest.New(t, countingQueue{})
	start := time.Now()
	res, err := Seed(b.Ctx, b.Cat, b.Imports, 1000, 1)
	if err != nil || res.Created != 1000 {
		t.Fatalf("seed = %+v, %v", res, err)
	}
	t.Logf("seeded 1000 clips in %v", time.Since(start))
}

func TestTierPattern(t *testing.T) {
	t.Parallel()
	got := tierPattern([]string{"easy", "medium", "hard"})
	count := map[string]int{}
	for _, n := range got {
		count[n]++
	}
	if count["easy"] != 4 || count["medium"] != 3 || count["hard"] != 1 {
		t.Fatalf("pattern = %v", got)
	}
	if got := tierPattern([]string{"only"}); len(got) == 0 {
		t.Fatalf("one tier gives no pattern")
	}
}
