-- +goose Up
-- Catalog reads at scale (README, Performance): lists, filters and sorts
-- read only the narrow row, come from an index in order and page by keyset.

-- A 768-float vector is 3 KB; stored inline it made every list read 3 KB
-- per row it passed. EXTERNAL moves it to the TOAST table (uncompressed:
-- floats do not compress), so the heap row keeps what lists read. Semantic
-- searches still walk the HNSW graphs, which hold their own copy, and
-- detoast only the rows they return. SET STORAGE affects new row versions
-- only: the UPDATE rewrites the existing ones.
ALTER TABLE videos ALTER COLUMN embedding SET STORAGE EXTERNAL;
UPDATE videos SET embedding = embedding WHERE embedding IS NOT NULL;

-- The tier price on the row, so that sorting by price is an index scan
-- instead of a join and a sort of every match. It is a copy for reads
-- only: purchases read tiers themselves. New rows and a changed difficulty
-- take it from tiers here; catalog.SetTier updates the rows of a tier in
-- the transaction that changes its price. FOR SHARE waits for such a
-- change to commit, so a clip written meanwhile gets the new price.
ALTER TABLE videos ADD COLUMN price_cents bigint;
-- +goose StatementBegin
CREATE FUNCTION broll_video_price() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    SELECT t.price_cents INTO NEW.price_cents FROM tiers t WHERE t.name = NEW.difficulty FOR SHARE;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER videos_price BEFORE INSERT OR UPDATE OF difficulty ON videos
    FOR EACH ROW EXECUTE FUNCTION broll_video_price();
UPDATE videos v SET price_cents = t.price_cents FROM tiers t WHERE t.name = v.difficulty;

-- One index per sort key of the live catalog, each ending in id so that
-- ties (an import gives many clips the same created_at) are ordered in the
-- sort's own direction and a keyset cursor (key, id) is one range scan.
-- A B-tree is read backwards for desc. Clips without a duration or a
-- virality score come last either way: the key is the value with NULL
-- mapped past the end of the order, one index per direction.
DROP INDEX videos_live_created_idx;
CREATE INDEX videos_live_created_idx ON videos (created_at, id) WHERE retired_at IS NULL;
CREATE INDEX videos_live_price_idx ON videos (price_cents, id) WHERE retired_at IS NULL;
CREATE INDEX videos_live_duration_asc_idx ON videos ((coalesce(duration_seconds, 'Infinity'::float8)), id)
    WHERE retired_at IS NULL;
CREATE INDEX videos_live_duration_desc_idx ON videos ((coalesce(duration_seconds, '-1'::float8)), id)
    WHERE retired_at IS NULL;
CREATE INDEX videos_live_virality_asc_idx ON videos ((coalesce(virality_score, 101)), id)
    WHERE retired_at IS NULL;
CREATE INDEX videos_live_virality_desc_idx ON videos ((coalesce(virality_score, -1)), id)
    WHERE retired_at IS NULL;
-- The same behind emotion, the filter clients use most: a page of one
-- emotion in any order is a range scan, and further filters (gender,
-- orientation) reject a few rows of it, not most of the catalog. They make
-- the plain emotion index of 00001 redundant.
DROP INDEX videos_emotion_idx;
CREATE INDEX videos_live_emotion_created_idx ON videos (emotion, created_at, id) WHERE retired_at IS NULL;
CREATE INDEX videos_live_emotion_price_idx ON videos (emotion, price_cents, id) WHERE retired_at IS NULL;
CREATE INDEX videos_live_emotion_duration_asc_idx
    ON videos (emotion, (coalesce(duration_seconds, 'Infinity'::float8)), id) WHERE retired_at IS NULL;
CREATE INDEX videos_live_emotion_duration_desc_idx
    ON videos (emotion, (coalesce(duration_seconds, '-1'::float8)), id) WHERE retired_at IS NULL;
CREATE INDEX videos_live_emotion_virality_asc_idx
    ON videos (emotion, (coalesce(virality_score, 101)), id) WHERE retired_at IS NULL;
CREATE INDEX videos_live_emotion_virality_desc_idx
    ON videos (emotion, (coalesce(virality_score, -1)), id) WHERE retired_at IS NULL;

-- The HNSW graphs hold their vectors as halfvec (16-bit floats): half the
-- size, so the whole-catalog graph and the per-emotion graphs of 00002 fit
-- in shared_buffers together at 100k clips (782 MB of float32 graphs did
-- not fit 512 MB, and a search read its graph pages from disk: 0.6 s at
-- p50 over HTTP). The ranking is by the halfvec distance; the similarity
-- a client sees is computed from the full vector of the returned rows.
-- recall@10 stays above 0.95 (README, Performance). Same names, so the
-- planner and the tests find them as before.
DROP INDEX videos_embedding_hnsw;
CREATE INDEX videos_embedding_hnsw ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops);
-- +goose StatementBegin
DO $$
DECLARE e text;
BEGIN
    FOREACH e IN ARRAY ARRAY['neutral', 'happy', 'playful', 'confident', 'surprised', 'confused', 'shocked',
                             'laughing', 'curious', 'amazed', 'excited', 'sad', 'angry'] LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', 'videos_embedding_hnsw_' || e);
        EXECUTE format('CREATE INDEX %I ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) '
                       'WHERE emotion = %L AND retired_at IS NULL', 'videos_embedding_hnsw_' || e, e);
    END LOOP;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE e text;
BEGIN
    FOREACH e IN ARRAY ARRAY['neutral', 'happy', 'playful', 'confident', 'surprised', 'confused', 'shocked',
                             'laughing', 'curious', 'amazed', 'excited', 'sad', 'angry'] LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', 'videos_embedding_hnsw_' || e);
        EXECUTE format('CREATE INDEX %I ON videos USING hnsw (embedding vector_cosine_ops) '
                       'WHERE emotion = %L AND retired_at IS NULL', 'videos_embedding_hnsw_' || e, e);
    END LOOP;
END;
$$;
-- +goose StatementEnd
DROP INDEX videos_embedding_hnsw;
CREATE INDEX videos_embedding_hnsw ON videos USING hnsw (embedding vector_cosine_ops);
DROP INDEX videos_live_emotion_virality_desc_idx;
DROP INDEX videos_live_emotion_virality_asc_idx;
DROP INDEX videos_live_emotion_duration_desc_idx;
DROP INDEX videos_live_emotion_duration_asc_idx;
DROP INDEX videos_live_emotion_price_idx;
DROP INDEX videos_live_emotion_created_idx;
CREATE INDEX videos_emotion_idx ON videos (emotion) WHERE retired_at IS NULL;
DROP INDEX videos_live_virality_desc_idx;
DROP INDEX videos_live_virality_asc_idx;
DROP INDEX videos_live_duration_desc_idx;
DROP INDEX videos_live_duration_asc_idx;
DROP INDEX videos_live_price_idx;
DROP INDEX videos_live_created_idx;
CREATE INDEX videos_live_created_idx ON videos (created_at DESC, id) WHERE retired_at IS NULL;
DROP TRIGGER videos_price ON videos;
DROP FUNCTION broll_video_price();
ALTER TABLE videos DROP COLUMN price_cents;
ALTER TABLE videos ALTER COLUMN embedding SET STORAGE PLAIN;
