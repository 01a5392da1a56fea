-- +goose NO TRANSACTION
-- +goose Up
-- The expression graphs (videos_embedding_hnsw and one per emotion, on
-- embedding::halfvec(768)) are dropped. Since 00031 searches walk the
-- graphs of the stored halfvecs (videos_half_hnsw*); the expression graphs
-- stayed one release for the release before it, whose nodes walked them
-- during a rolling upgrade. No node of this release's predecessor reads
-- them, so upgrades reach this migration through the release that brought
-- 00031 (migrations/README.md, "Kept for the release before").
--
-- What they cost while kept: two more graph inserts per stored vector
-- (an import of 100,000 clips was searchable after 5 min 20 s with them,
-- 3 min 26 s without: docs/performance.md) and 390 MB at 100,000 clips.
-- DROP INDEX CONCURRENTLY waits for the transactions that use the index
-- and blocks no read or write meanwhile.
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_neutral;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_happy;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_playful;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confident;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_surprised;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confused;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_shocked;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_laughing;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_curious;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_amazed;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_excited;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_sad;
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_angry;

-- +goose Down
-- The release before 00032 does not read these either; they are built
-- again (CONCURRENTLY, as 00014 built them) only so that migrating down to
-- 00031 leaves its schema as it was.
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8);

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_neutral;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_neutral ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'neutral' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_happy;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_happy ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'happy' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_playful;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_playful ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'playful' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confident;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confident ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'confident' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_surprised;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_surprised ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'surprised' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confused;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confused ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'confused' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_shocked;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_shocked ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'shocked' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_laughing;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_laughing ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'laughing' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_curious;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_curious ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'curious' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_amazed;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_amazed ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'amazed' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_excited;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_excited ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'excited' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_sad;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_sad ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'sad' AND retired_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_angry;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_angry ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'angry' AND retired_at IS NULL;
