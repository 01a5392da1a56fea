-- +goose NO TRANSACTION
-- +goose Up
-- The HNSW graphs are rebuilt with 8 links per element (m = 8) instead of
-- pgvector's default 16. A semantic search's cost is the graph walk, and
-- most of the walk is reading each visited element's neighbours' vectors:
-- fewer links per element visit fewer vectors per step. recall@10 held at
-- m 8 on the built-in embedder's vectors and on embedding-shaped ones, and
-- the walk took 40% less time (docs/performance.md, "The graph's m").
-- Each graph is built beside the old one (CONCURRENTLY: imports, the
-- worker and searches go on), then takes its name, so the planner and the
-- tests find them as before. Should a build fail, drop the INVALID
-- *_m8 index it leaves and migrate again.
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8);
DROP INDEX CONCURRENTLY videos_embedding_hnsw;
ALTER INDEX videos_embedding_hnsw_m8 RENAME TO videos_embedding_hnsw;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_neutral_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_neutral_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'neutral' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_neutral;
ALTER INDEX videos_embedding_hnsw_neutral_m8 RENAME TO videos_embedding_hnsw_neutral;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_happy_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_happy_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'happy' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_happy;
ALTER INDEX videos_embedding_hnsw_happy_m8 RENAME TO videos_embedding_hnsw_happy;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_playful_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_playful_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'playful' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_playful;
ALTER INDEX videos_embedding_hnsw_playful_m8 RENAME TO videos_embedding_hnsw_playful;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confident_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confident_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'confident' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_confident;
ALTER INDEX videos_embedding_hnsw_confident_m8 RENAME TO videos_embedding_hnsw_confident;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_surprised_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_surprised_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'surprised' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_surprised;
ALTER INDEX videos_embedding_hnsw_surprised_m8 RENAME TO videos_embedding_hnsw_surprised;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confused_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confused_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'confused' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_confused;
ALTER INDEX videos_embedding_hnsw_confused_m8 RENAME TO videos_embedding_hnsw_confused;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_shocked_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_shocked_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'shocked' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_shocked;
ALTER INDEX videos_embedding_hnsw_shocked_m8 RENAME TO videos_embedding_hnsw_shocked;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_laughing_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_laughing_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'laughing' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_laughing;
ALTER INDEX videos_embedding_hnsw_laughing_m8 RENAME TO videos_embedding_hnsw_laughing;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_curious_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_curious_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'curious' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_curious;
ALTER INDEX videos_embedding_hnsw_curious_m8 RENAME TO videos_embedding_hnsw_curious;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_amazed_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_amazed_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'amazed' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_amazed;
ALTER INDEX videos_embedding_hnsw_amazed_m8 RENAME TO videos_embedding_hnsw_amazed;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_excited_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_excited_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'excited' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_excited;
ALTER INDEX videos_embedding_hnsw_excited_m8 RENAME TO videos_embedding_hnsw_excited;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_sad_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_sad_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'sad' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_sad;
ALTER INDEX videos_embedding_hnsw_sad_m8 RENAME TO videos_embedding_hnsw_sad;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_angry_m8;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_angry_m8 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8)
    WHERE emotion = 'angry' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_angry;
ALTER INDEX videos_embedding_hnsw_angry_m8 RENAME TO videos_embedding_hnsw_angry;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops);
DROP INDEX CONCURRENTLY videos_embedding_hnsw;
ALTER INDEX videos_embedding_hnsw_m16 RENAME TO videos_embedding_hnsw;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_neutral_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_neutral_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'neutral' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_neutral;
ALTER INDEX videos_embedding_hnsw_neutral_m16 RENAME TO videos_embedding_hnsw_neutral;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_happy_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_happy_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'happy' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_happy;
ALTER INDEX videos_embedding_hnsw_happy_m16 RENAME TO videos_embedding_hnsw_happy;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_playful_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_playful_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'playful' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_playful;
ALTER INDEX videos_embedding_hnsw_playful_m16 RENAME TO videos_embedding_hnsw_playful;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confident_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confident_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'confident' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_confident;
ALTER INDEX videos_embedding_hnsw_confident_m16 RENAME TO videos_embedding_hnsw_confident;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_surprised_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_surprised_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'surprised' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_surprised;
ALTER INDEX videos_embedding_hnsw_surprised_m16 RENAME TO videos_embedding_hnsw_surprised;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_confused_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confused_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'confused' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_confused;
ALTER INDEX videos_embedding_hnsw_confused_m16 RENAME TO videos_embedding_hnsw_confused;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_shocked_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_shocked_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'shocked' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_shocked;
ALTER INDEX videos_embedding_hnsw_shocked_m16 RENAME TO videos_embedding_hnsw_shocked;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_laughing_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_laughing_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'laughing' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_laughing;
ALTER INDEX videos_embedding_hnsw_laughing_m16 RENAME TO videos_embedding_hnsw_laughing;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_curious_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_curious_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'curious' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_curious;
ALTER INDEX videos_embedding_hnsw_curious_m16 RENAME TO videos_embedding_hnsw_curious;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_amazed_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_amazed_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'amazed' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_amazed;
ALTER INDEX videos_embedding_hnsw_amazed_m16 RENAME TO videos_embedding_hnsw_amazed;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_excited_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_excited_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'excited' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_excited;
ALTER INDEX videos_embedding_hnsw_excited_m16 RENAME TO videos_embedding_hnsw_excited;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_sad_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_sad_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'sad' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_sad;
ALTER INDEX videos_embedding_hnsw_sad_m16 RENAME TO videos_embedding_hnsw_sad;

DROP INDEX CONCURRENTLY IF EXISTS videos_embedding_hnsw_angry_m16;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_angry_m16 ON videos USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops)
    WHERE emotion = 'angry' AND retired_at IS NULL;
DROP INDEX CONCURRENTLY videos_embedding_hnsw_angry;
ALTER INDEX videos_embedding_hnsw_angry_m16 RENAME TO videos_embedding_hnsw_angry;
