-- +goose Up
-- Collections: a key's shortlists of clips (package collections).
-- A collection belongs to the key that made it (api_key_id) and to that
-- key's mode (livemode: a test key's are test ones); its root key reads it
-- through broll_key_family, as it reads purchases. item_count and
-- last_position are kept by the writes that add and remove items, under
-- the collection row's lock, so the 5,000-clip cap holds under concurrent
-- adds and positions keep the order clips were added in.
CREATE TABLE collections (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id    uuid NOT NULL REFERENCES accounts (id),
    api_key_id    uuid NOT NULL REFERENCES api_keys (id),
    livemode      boolean NOT NULL,
    name          text NOT NULL CHECK (name <> ''),
    description   text,
    item_count    integer NOT NULL DEFAULT 0 CHECK (item_count >= 0),
    last_position bigint NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- The newest-first listing of one key's collections, and its keyset.
CREATE INDEX collections_key_created_idx ON collections (api_key_id, created_at DESC, id DESC);

-- How many collections a key holds: the row the 1,000-collection cap is
-- counted on (an upsert that moves it only below the cap), so concurrent
-- creations cannot pass it.
CREATE TABLE collection_counts (
    api_key_id  uuid PRIMARY KEY REFERENCES api_keys (id),
    collections integer NOT NULL CHECK (collections >= 0)
);

-- A collection's clips, each once, in the order added (position).
CREATE TABLE collection_items (
    collection_id uuid NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    video_id      uuid NOT NULL REFERENCES videos (id),
    position      bigint NOT NULL,
    added_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (collection_id, video_id)
);
-- The items page: one range scan per page in the order added.
CREATE UNIQUE INDEX collection_items_order_idx ON collection_items (collection_id, position);

-- +goose Down
DROP TABLE collection_items;
DROP TABLE collection_counts;
DROP TABLE collections;
