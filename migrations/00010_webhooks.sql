-- +goose Up
-- Webhooks: endpoints an account's root keys register, the outbox of events
-- written in the transaction of the change they report, one delivery per
-- (endpoint, event) that the worker claims, and the log of every attempt.

-- balance.low fires when a purchase takes the balance below this; NULL is
-- the service's default (BROLL_LOW_BALANCE_THRESHOLD).
ALTER TABLE accounts ADD COLUMN low_balance_cents bigint CHECK (low_balance_cents >= 0);

-- Root keys manage webhooks; keys issued before this hold the scope too.
UPDATE api_keys SET scopes = array_append(scopes, 'webhooks:manage')
WHERE kind = 'root' AND NOT 'webhooks:manage' = ANY (scopes);

CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id      uuid NOT NULL REFERENCES accounts (id),
    created_by      uuid REFERENCES api_keys (id),
    url             text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2000),
    description     text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
    events          text[] NOT NULL CHECK (cardinality(events) > 0),
    enabled         boolean NOT NULL DEFAULT true,
    -- the first failure of the current run of failures; NULL after a success
    failing_since   timestamptz,
    disabled_at     timestamptz,
    disabled_reason text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, created_at);

-- Several secrets are active during a rotation: the old one until
-- expires_at, so receivers can switch over without dropping an event.
CREATE TABLE webhook_secrets (
    id          bigserial PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    secret      text NOT NULL CHECK (secret LIKE 'whsec_%'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz
);
CREATE INDEX webhook_secrets_endpoint_idx ON webhook_secrets (endpoint_id);

-- The outbox. account_id NULL: an event of the whole service (clips.embedded)
-- that every account's endpoints may subscribe to.
CREATE TABLE webhook_events (
    id         text PRIMARY KEY DEFAULT 'evt_' || replace(gen_random_uuid()::text, '-', ''),
    account_id uuid REFERENCES accounts (id),
    type       text NOT NULL CHECK (type ~ '^[a-z_]+(\.[a-z_]+)*$'),
    livemode   boolean NOT NULL DEFAULT true,
    data       jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_account_idx ON webhook_events (account_id, created_at);
-- Pruning past the retention, oldest first.
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);

-- One delivery per endpoint and event. next_attempt_at is also the lease of
-- a claimed delivery: a worker that dies mid-send leaves it due again.
CREATE TABLE webhook_deliveries (
    id              bigserial PRIMARY KEY,
    endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
-- An event's deliveries, for pruning and its cascade.
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
    id           bigserial PRIMARY KEY,
    delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    endpoint_id  uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    status_code  integer,
    duration_ms  integer NOT NULL,
    error        text NOT NULL DEFAULT ''
);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id);

-- Fan-out in the writer's own transaction: whoever writes an event (a
-- purchase, a key change, the worker) needs to know nothing of endpoints,
-- and an event that rolls back takes its deliveries with it. A 'ping' is
-- addressed to one endpoint by the code that writes it.
-- +goose StatementBegin
CREATE FUNCTION broll_webhook_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.type = 'ping' THEN
        RETURN NULL;
    END IF;
    INSERT INTO webhook_deliveries (endpoint_id, event_id)
    SELECT e.id, NEW.id FROM webhook_endpoints e
    WHERE e.enabled AND NEW.type = ANY (e.events)
      AND (NEW.account_id IS NULL OR e.account_id = NEW.account_id);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_events_fanout AFTER INSERT ON webhook_events
    FOR EACH ROW EXECUTE FUNCTION broll_webhook_fanout();

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP FUNCTION broll_webhook_fanout();
DROP TABLE webhook_secrets;
DROP TABLE webhook_endpoints;
UPDATE api_keys SET scopes = array_remove(scopes, 'webhooks:manage') WHERE kind = 'root';
ALTER TABLE accounts DROP COLUMN low_balance_cents;
