-- +goose NO TRANSACTION
-- +goose Up
-- Each clip's vector is kept a second time, as the halfvec the graphs are
-- made of, inline in the clip's row (STORAGE MAIN: 1.5 KB, where the full
-- vector, 3 KB, lives out of line in TOAST), and the graphs are built on it.
-- Postgres evaluates a walk's ORDER BY expression again for every row the
-- index yields: on the expression graphs (embedding::halfvec(768)) that was
-- a read of the full vector from TOAST and a conversion per candidate, a
-- third of a semantic search's statement (docs/performance.md, "Semantic
-- search's stored halfvecs"). On a stored halfvec it is a distance over
-- bytes already in the row.
--
-- A trigger keeps embedding_half equal to embedding::halfvec(768) on every
-- write of embedding, whoever writes it: the release before this one
-- writes only embedding. The expression graphs stay, because that release
-- walks them during a rolling upgrade; a later migration drops them.
--
-- The backfill rewrites every embedded row (each row gains 1.5 KB, so no
-- update is HOT) and costs about three minutes per 100,000 clips on two
-- cores with the expression graphs in place; reads go on, and a catalog
-- write to a row waits for it. The graphs are built after it, CONCURRENTLY,
-- beside the old ones. Should a build fail, migrate again: each build drops
-- an INVALID index it left first.
ALTER TABLE videos ADD COLUMN IF NOT EXISTS embedding_half halfvec(768);
ALTER TABLE videos ALTER COLUMN embedding_half SET STORAGE MAIN;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION broll_video_half() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.embedding_half := NEW.embedding::halfvec(768);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE OR REPLACE TRIGGER videos_half BEFORE INSERT OR UPDATE OF embedding, embedding_half ON videos
    FOR EACH ROW EXECUTE FUNCTION broll_video_half();

-- After the trigger: a write committed before it is seen here, one after
-- it sets its own copy.
UPDATE videos SET embedding_half = embedding::halfvec(768)
WHERE embedding IS NOT NULL AND embedding_half IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw;
CREATE INDEX CONCURRENTLY videos_half_hnsw ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8);

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_neutral;
CREATE INDEX CONCURRENTLY videos_half_hnsw_neutral ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'neutral' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_happy;
CREATE INDEX CONCURRENTLY videos_half_hnsw_happy ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'happy' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_playful;
CREATE INDEX CONCURRENTLY videos_half_hnsw_playful ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'playful' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_confident;
CREATE INDEX CONCURRENTLY videos_half_hnsw_confident ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'confident' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_surprised;
CREATE INDEX CONCURRENTLY videos_half_hnsw_surprised ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'surprised' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_confused;
CREATE INDEX CONCURRENTLY videos_half_hnsw_confused ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'confused' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_shocked;
CREATE INDEX CONCURRENTLY videos_half_hnsw_shocked ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'shocked' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_laughing;
CREATE INDEX CONCURRENTLY videos_half_hnsw_laughing ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'laughing' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_curious;
CREATE INDEX CONCURRENTLY videos_half_hnsw_curious ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'curious' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_amazed;
CREATE INDEX CONCURRENTLY videos_half_hnsw_amazed ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'amazed' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_excited;
CREATE INDEX CONCURRENTLY videos_half_hnsw_excited ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'excited' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_sad;
CREATE INDEX CONCURRENTLY videos_half_hnsw_sad ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'sad' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_angry;
CREATE INDEX CONCURRENTLY videos_half_hnsw_angry ON videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'angry' AND retired_at IS NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_neutral;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_happy;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_playful;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_confident;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_surprised;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_confused;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_shocked;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_laughing;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_curious;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_amazed;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_excited;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_sad;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw_angry;
DROP INDEX CONCURRENTLY IF EXISTS videos_half_hnsw;
DROP TRIGGER IF EXISTS videos_half ON videos;
DROP FUNCTION IF EXISTS broll_video_half();
ALTER TABLE videos DROP COLUMN IF EXISTS embedding_half;
