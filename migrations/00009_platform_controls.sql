-- +goose Up
-- Spend limits per key: an amount in cents over a UTC period ('day',
-- 'month') or over the key's whole life ('total'). Both or neither.
ALTER TABLE api_keys
    ADD COLUMN spend_limit_cents bigint CHECK (spend_limit_cents >= 0),
    ADD COLUMN spend_limit_period text CHECK (spend_limit_period IN ('day', 'month', 'total')),
    ADD CONSTRAINT api_keys_spend_limit_whole CHECK ((spend_limit_cents IS NULL) = (spend_limit_period IS NULL)),
    -- Bumped by every change of a key's settings (PATCH): nodes compare it
    -- with a Redis marker to drop a cached copy that predates the change.
    ADD COLUMN settings_version bigint NOT NULL DEFAULT 0;

-- What each key has spent, kept by broll_purchase_batch in the statement
-- that charges the pool and under the same account lock: the limit check
-- reads one row instead of summing the key's purchases. A counter whose
-- start is not the current day (month) counts as zero; all three are kept
-- for every key, so a limit set or changed later knows what was spent.
CREATE TABLE key_spend (
    api_key_id  uuid PRIMARY KEY REFERENCES api_keys (id),
    day_start   date NOT NULL,
    day_cents   bigint NOT NULL CHECK (day_cents >= 0),
    month_start date NOT NULL,
    month_cents bigint NOT NULL CHECK (month_cents >= 0),
    total_cents bigint NOT NULL CHECK (total_cents >= 0)
);
INSERT INTO key_spend (api_key_id, day_start, day_cents, month_start, month_cents, total_cents)
SELECT p.api_key_id,
       (now() AT TIME ZONE 'UTC')::date,
       coalesce(sum(p.price_cents) FILTER (WHERE p.purchased_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0),
       date_trunc('month', now() AT TIME ZONE 'UTC')::date,
       coalesce(sum(p.price_cents) FILTER (WHERE p.purchased_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0),
       sum(p.price_cents)
FROM purchases p WHERE p.api_key_id IS NOT NULL
GROUP BY p.api_key_id;

-- Idempotency-Key: the first response to a key, per API key, for 24 hours.
-- A row without a status is a request still running; request_hash tells a
-- retry from another request that reuses the key.
CREATE TABLE idempotency_keys (
    api_key_id   uuid NOT NULL REFERENCES api_keys (id),
    idem_key     text NOT NULL CHECK (char_length(idem_key) BETWEEN 1 AND 255),
    request_hash bytea NOT NULL,
    status       integer,
    content_type text,
    body         bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (api_key_id, idem_key)
);
-- The purge of expired rows walks this.
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE key_spend;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_spend_limit_whole,
    DROP COLUMN settings_version, DROP COLUMN spend_limit_period, DROP COLUMN spend_limit_cents;
