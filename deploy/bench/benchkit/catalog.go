package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/embed"
	"broll/internal/config"
	"broll/internal/database"
	"broll/wiring"
)

// The words generated clips and semantic queries are made of: a person,
// an action and a place, as B-roll is described.
var (
	People  = []string{"Woman", "Man", "Young woman", "Older man", "Teenager", "Couple"}
	Actions = []string{"laughing at a phone", "drinking coffee", "driving a car", "unboxing a package",
		"waving at the camera", "cooking dinner", "walking a dog", "working on a laptop"}
	Places = []string{"home", "kitchen", "car", "office", "street", "cafe", "park", "gym", "beach", "bedroom"}
)

// RandomClip is the i-th generated clip: every filter field set, so that
// each filter and each emotion's graph has its share of the catalog.
func RandomClip(rng *rand.Rand, i int) imports.VideoInput {
	emotions, genders, ages := catalog.Emotions(), catalog.Genders(), catalog.AgeRanges()
	dur, vir := math.Round((3+rng.Float64()*27)*10)/10, rng.IntN(101)
	return imports.VideoInput{
		Title: fmt.Sprintf("%s %s #%d", People[rng.IntN(len(People))], Actions[rng.IntN(len(Actions))], i),
		Tags:  []string{"ugc", Places[rng.IntN(len(Places))]}, Emotion: emotions[rng.IntN(len(emotions))],
		Gender: genders[rng.IntN(len(genders))], AgeRange: ages[rng.IntN(len(ages))],
		Location: Places[rng.IntN(len(Places))], Orientation: catalog.Orientations()[rng.IntN(3)],
		Difficulty: []string{"easy", "medium", "hard"}[rng.IntN(3)], DurationSeconds: &dur, ViralityScore: &vir,
	}
}

// SemanticQuery is a description a customer might search by meaning.
func SemanticQuery(rng *rand.Rand) string {
	return fmt.Sprintf("%s %s in the %s", People[rng.IntN(len(People))], Actions[rng.IntN(len(Actions))], Places[rng.IntN(len(Places))])
}

// ImportCatalog writes n generated clips as JSON Lines and imports them
// through imports.Import (the path of `brollctl clips import`) in chunks
// (one import holds its clips in memory), each clip with three small media
// files that the import copies into media storage.
func ImportCatalog(ctx context.Context, pool *pgxpool.Pool, n int, seed uint64) error {
	src, err := os.MkdirTemp("", "broll-bench-src-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	mediaDir, err := os.MkdirTemp("", "broll-bench-media-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mediaDir)
	files := map[string][]byte{"full.avi": []byte("RIFF0000AVI "), "preview.gif": []byte("GIF89a"), "thumb.jpg": {0xff, 0xd8, 0xff}}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			return err
		}
	}
	g, err := OpenCatalog(ctx, pool, mediaDir)
	if err != nil {
		return err
	}
	defer g.Close()
	svc := g.Imports
	rng := rand.New(rand.NewPCG(seed, 2))
	const chunk = 20_000
	for done := 0; done < n; {
		size := min(chunk, n-done)
		var lines bytes.Buffer
		enc := json.NewEncoder(&lines)
		for i := range size {
			c := RandomClip(rng, done+i)
			c.MediaFile, c.PreviewFile, c.ThumbnailFile = "full.avi", "preview.gif", "thumb.jpg"
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		res, err := svc.Import(ctx, &lines, src, nil)
		if err != nil {
			return err
		}
		if res.Created != size {
			return fmt.Errorf("created %d of %d clips", res.Created, size)
		}
		done += size
		// The media files are not what is measured; keep the disk free.
		if err := os.RemoveAll(mediaDir); err != nil {
			return err
		}
		if err := os.MkdirAll(mediaDir, 0o755); err != nil {
			return err
		}
	}
	// Only clips whose media passed the probe are listed; these files are a
	// few bytes standing in for videos, so record them as the worker's media
	// job records a file that passed (catalog sqlMediaDone), and measure the
	// catalog a customer sees.
	_, err = pool.Exec(ctx, `UPDATE videos SET media_status = 'ready', media_error = NULL,
		media_processed_at = now(), retired_at = nullif(retired_at, 'infinity'::timestamptz)
		WHERE media_status = 'pending'`)
	return err
}

// EmbedCatalog embeds the first n clips (by id) as the worker does
// (EmbeddingInputs, the embedder, StoreEmbeddings) with the HNSW indexes
// dropped, then builds them again from their own definitions: one build is
// far faster than n graph inserts, and is how a large catalog is loaded.
func EmbedCatalog(ctx context.Context, pool *pgxpool.Pool, e embed.Embedder, n int) error {
	type hnswIndex struct{ name, def string }
	indexes, err := database.Select(ctx, pool, func(r pgx.CollectableRow) (hnswIndex, error) {
		var ix hnswIndex
		return ix, r.Scan(&ix.name, &ix.def)
	}, `
		SELECT indexname, indexdef FROM pg_indexes
		WHERE tablename = 'videos' AND indexdef LIKE '%USING hnsw%' ORDER BY indexname`)
	if err != nil {
		return err
	}
	for _, ix := range indexes {
		if _, err := pool.Exec(ctx, `DROP INDEX `+pgx.Identifier{ix.name}.Sanitize()); err != nil {
			return err
		}
	}
	ids, err := database.Select(ctx, pool, pgx.RowTo[uuid.UUID], `SELECT id FROM videos ORDER BY id LIMIT $1`, n)
	if err != nil {
		return err
	}
	g, err := OpenCatalog(ctx, pool, "")
	if err != nil {
		return err
	}
	defer g.Close()
	svc := g.Catalog
	const batch = 500
	for i := 0; i < len(ids); i += batch {
		inputs, err := svc.EmbeddingInputs(ctx, ids[i:min(i+batch, len(ids))])
		if err != nil {
			return err
		}
		texts := make([]string, len(inputs))
		for j, in := range inputs {
			texts[j] = in.Text
		}
		vecs, err := e.Embed(ctx, embed.Document, texts)
		if err != nil {
			return err
		}
		embs := make([]catalog.Embedding, len(inputs))
		for j, in := range inputs {
			embs[j] = catalog.Embedding{ID: in.ID, Vector: vecs[j]}
		}
		if err := svc.StoreEmbeddings(ctx, e.Model(), embs); err != nil {
			return err
		}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '1GB'`); err != nil {
		return err
	}
	for _, ix := range indexes {
		if _, err := conn.Exec(ctx, ix.def); err != nil {
			return err
		}
	}
	return nil
}

// OpenCatalog opens the graph of the catalog and its search as the
// composition root builds them over pool, with the default configuration
// and no queue (clips stay pending: a benchmark embeds them itself),
// storing media under mediaDir ("": none). Close closes it.
func OpenCatalog(ctx context.Context, pool *pgxpool.Pool, mediaDir string) (*wiring.Services, error) {
	return OpenCatalogWith(ctx, pool, mediaDir, nil)
}

// OpenCatalogWith is OpenCatalog with configure (nil: none) applied to the
// configuration first, to measure the services under other settings.
func OpenCatalogWith(ctx context.Context, pool *pgxpool.Pool, mediaDir string, configure func(*config.Config)) (*wiring.Services, error) {
	cfg, o := config.Defaults(), wiring.Options{Pool: pool}
	if mediaDir != "" {
		cfg.MediaDir, o.Parts = mediaDir, wiring.Media
	}
	if configure != nil {
		configure(&cfg)
	}
	return wiring.Open(ctx, cfg, o)
}
