-- +goose NO TRANSACTION
-- +goose Up
-- One HNSW graph per emotion, beside the whole-catalog one. Emotion is the
-- filter clients use most, and a filtered walk of the whole graph is slow
-- and loses recall: the index yields clips of every emotion and the filter
-- throws away twelve in thirteen, so pgvector's iterative scan has to walk
-- far. With these, the planner (custom plans, the emotion known) walks the
-- graph of that emotion only. Measured by deploy/bench/search at 100k clips
-- (README, Performance), the index query with emotion = X went from
-- recall@10 0.93 and p99 16 ms to 1.00 and 6 ms; with emotion and gender
-- from 0.97 and 39 ms to 1.00 and 6 ms. The cost: a second copy of every
-- live vector in an index, and a second graph insert when the worker
-- stores a vector. Retired clips are left out; only searches of the live
-- catalog filter on emotion this way.
-- CONCURRENTLY keeps imports and the worker writing while a filled catalog
-- is indexed; should a build fail, drop the INVALID index it leaves and
-- migrate again.
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_neutral ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'neutral' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_happy ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'happy' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_playful ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'playful' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confident ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'confident' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_surprised ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'surprised' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_confused ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'confused' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_shocked ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'shocked' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_laughing ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'laughing' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_curious ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'curious' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_amazed ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'amazed' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_excited ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'excited' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_sad ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'sad' AND retired_at IS NULL;
CREATE INDEX CONCURRENTLY videos_embedding_hnsw_angry ON videos
    USING hnsw (embedding vector_cosine_ops) WHERE emotion = 'angry' AND retired_at IS NULL;

-- +goose Down
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
