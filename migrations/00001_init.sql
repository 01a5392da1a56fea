-- +goose Up
CREATE EXTENSION IF NOT EXISTS vector;

-- An account owns the shared credit pool. balance_cents is the only mutable
-- copy of money; every change to it is mirrored by a row in ledger.
CREATE TABLE accounts (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name          text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    source        text NOT NULL UNIQUE CHECK (source ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    balance_cents bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_balance_not_negative CHECK (balance_cents >= 0),
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Keys: only a hash of the secret is stored. Root keys belong to an account,
-- customer keys to a root key (and its account), ops keys to no account.
CREATE TABLE api_keys (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id            uuid REFERENCES accounts (id),
    kind                  text NOT NULL CHECK (kind IN ('root', 'customer', 'ops')),
    parent_id             uuid REFERENCES api_keys (id),
    label                 text NOT NULL DEFAULT '' CHECK (char_length(label) <= 200),
    scopes                text[] NOT NULL,
    key_hash              bytea NOT NULL UNIQUE,
    key_prefix            text NOT NULL,
    rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
    total_requests        bigint NOT NULL DEFAULT 0 CHECK (total_requests >= 0),
    last_used_at          timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    revoked_at            timestamptz,
    CHECK ((kind = 'customer') = (parent_id IS NOT NULL)),
    CHECK ((kind = 'ops') = (account_id IS NULL))
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at);
CREATE INDEX api_keys_parent_idx ON api_keys (parent_id);

-- Usage counters are counted in Redis and flushed here in batches; a batch id
-- recorded in the same transaction makes a retried flush apply only once.
CREATE TABLE usage_flushes (
    batch_id   text PRIMARY KEY,
    flushed_at timestamptz NOT NULL DEFAULT now()
);

-- Difficulty tiers set the price of a clip. Purchases copy the price they
-- paid, so changing a tier never alters history.
CREATE TABLE tiers (
    name        text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_]{0,31}$'),
    price_cents bigint NOT NULL CHECK (price_cents >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO tiers (name, price_cents) VALUES ('easy', 500), ('medium', 1000), ('hard', 2500);

-- array_to_string is only STABLE; tags are plain text so this is safe to
-- declare IMMUTABLE for the generated search column.
CREATE FUNCTION broll_tags_text(tags text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(array_to_string(tags, ' '), '');

CREATE TABLE videos (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    title              text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 300),
    description        text NOT NULL DEFAULT '',
    tags               text[] NOT NULL DEFAULT '{}',
    emotion            text NOT NULL CHECK (emotion IN ('neutral', 'happy', 'playful', 'confident',
                           'surprised', 'confused', 'shocked', 'laughing', 'curious', 'amazed',
                           'excited', 'sad', 'angry')),
    gender             text NOT NULL CHECK (gender IN ('female', 'male', 'non_binary')),
    age_range          text CHECK (age_range IN ('18-24', '25-34', '35-44', '45-54', '55+')),
    location           text,
    media_type         text NOT NULL DEFAULT 'video' CHECK (media_type IN ('video', 'image')),
    orientation        text CHECK (orientation IN ('vertical', 'horizontal', 'square')),
    duration_seconds   double precision CHECK (duration_seconds >= 0),
    width              integer CHECK (width > 0),
    height             integer CHECK (height > 0),
    fps                double precision CHECK (fps > 0),
    difficulty         text NOT NULL REFERENCES tiers (name) ON UPDATE CASCADE,
    virality_score     integer CHECK (virality_score BETWEEN 0 AND 100),
    model_id           text,
    model_name         text,
    media_key          text NOT NULL,
    media_content_type text NOT NULL DEFAULT 'application/octet-stream',
    media_size         bigint NOT NULL DEFAULT 0,
    preview_key        text,
    thumbnail_key      text,
    -- Semantic search. A vector is only compared with vectors of the same
    -- model; embedding_status drives the worker and `brollctl clips status`.
    embedding          vector(768),
    embedding_model    text,
    embedding_status   text NOT NULL DEFAULT 'pending'
                           CHECK (embedding_status IN ('pending', 'ready', 'failed')),
    embedding_error    text,
    embedded_at        timestamptz,
    search_tsv         tsvector GENERATED ALWAYS AS (
                           setweight(to_tsvector('english', title), 'A') ||
                           setweight(to_tsvector('english', broll_tags_text(tags)), 'B') ||
                           setweight(to_tsvector('english', description), 'C') ||
                           setweight(to_tsvector('english',
                               emotion || ' ' || coalesce(location, '') || ' ' ||
                               coalesce(model_name, '')), 'D')
                       ) STORED,
    retired_at         timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((embedding IS NULL) = (embedding_model IS NULL))
);
-- Vectors are read whole on every distance computation; keep them inline.
ALTER TABLE videos ALTER COLUMN embedding SET STORAGE PLAIN;
CREATE INDEX videos_embedding_hnsw ON videos USING hnsw (embedding vector_cosine_ops);
CREATE INDEX videos_search_gin ON videos USING gin (search_tsv);
CREATE INDEX videos_live_created_idx ON videos (created_at DESC, id) WHERE retired_at IS NULL;
CREATE INDEX videos_emotion_idx ON videos (emotion) WHERE retired_at IS NULL;
CREATE INDEX videos_gender_idx ON videos (gender) WHERE retired_at IS NULL;
CREATE INDEX videos_pending_idx ON videos (embedding_status) WHERE embedding_status <> 'ready';

-- One purchase per (key, video). Legacy (v0) purchases have no key and are
-- deduplicated per (account, customer_email, video) instead.
CREATE TABLE purchases (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id     uuid NOT NULL REFERENCES accounts (id),
    api_key_id     uuid REFERENCES api_keys (id),
    video_id       uuid NOT NULL REFERENCES videos (id),
    price_cents    bigint NOT NULL CHECK (price_cents >= 0),
    tier           text NOT NULL,
    legacy         boolean NOT NULL DEFAULT false,
    source         text,
    customer_email text,
    purchased_at   timestamptz NOT NULL DEFAULT now(),
    CHECK (legacy = (api_key_id IS NULL)),
    UNIQUE (api_key_id, video_id)
);
CREATE UNIQUE INDEX purchases_legacy_unique
    ON purchases (account_id, coalesce(customer_email, ''), video_id) WHERE legacy;
CREATE INDEX purchases_account_time_idx ON purchases (account_id, purchased_at);
CREATE INDEX purchases_key_time_idx ON purchases (api_key_id, purchased_at);

-- Every movement of credit, append-only: sum(amount_cents) per account equals
-- accounts.balance_cents at every commit.
CREATE TABLE ledger (
    id           bigserial PRIMARY KEY,
    account_id   uuid NOT NULL REFERENCES accounts (id),
    amount_cents bigint NOT NULL CHECK (amount_cents <> 0),
    kind         text NOT NULL CHECK (kind IN ('topup', 'purchase', 'adjustment', 'refund')),
    purchase_id  uuid REFERENCES purchases (id),
    api_key_id   uuid REFERENCES api_keys (id),
    note         text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_account_idx ON ledger (account_id, created_at);

-- +goose StatementBegin
CREATE FUNCTION broll_ledger_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION broll_ledger_append_only();

-- Every fetch of a full-quality file, for the redistribution audit.
CREATE TABLE download_log (
    id            bigserial PRIMARY KEY,
    purchase_id   uuid NOT NULL REFERENCES purchases (id),
    account_id    uuid NOT NULL REFERENCES accounts (id),
    api_key_id    uuid REFERENCES api_keys (id),
    client_addr   inet,
    user_agent    text NOT NULL DEFAULT '',
    bytes_sent    bigint NOT NULL DEFAULT 0,
    status        integer NOT NULL,
    downloaded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX download_log_purchase_idx ON download_log (purchase_id, downloaded_at);
CREATE INDEX download_log_time_idx ON download_log (downloaded_at);

-- +goose Down
DROP TABLE download_log;
DROP TABLE ledger;
DROP FUNCTION broll_ledger_append_only();
DROP TABLE purchases;
DROP TABLE videos;
DROP FUNCTION broll_tags_text(text[]);
DROP TABLE tiers;
DROP TABLE usage_flushes;
DROP TABLE api_keys;
DROP TABLE accounts;
