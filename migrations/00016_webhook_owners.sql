-- +goose Up
-- Webhook endpoints belong to the root key that made them, by the purchases
-- visibility rule: an account may hold one root key per integration, and
-- one integration must not list, re-key, read the deliveries of or receive
-- the events of another's endpoints. The fan-out that applies the rule to
-- events is migrations/functions/webhook_fanout.sql.
--
-- Existing endpoints go to the root key that made them (created_by, filled
-- in by every creation through the API). One without a root key of its own
-- account there (written before created_by existed, or by hand) goes to the
-- account's first root key, the oldest, revoked or not. An account with
-- endpoints but no root key at all cannot have made them through the API
-- and nobody could manage them: those endpoints are deleted.
UPDATE webhook_endpoints e SET created_by = (
    SELECT k.id FROM api_keys k WHERE k.account_id = e.account_id AND k.kind = 'root'
    ORDER BY k.created_at, k.id LIMIT 1)
WHERE NOT EXISTS (SELECT 1 FROM api_keys k
                  WHERE k.id = e.created_by AND k.account_id = e.account_id AND k.kind = 'root');
DELETE FROM webhook_endpoints WHERE created_by IS NULL;
ALTER TABLE webhook_endpoints RENAME COLUMN created_by TO root_key_id;
ALTER TABLE webhook_endpoints ALTER COLUMN root_key_id SET NOT NULL;
CREATE INDEX webhook_endpoints_root_key_idx ON webhook_endpoints (root_key_id, created_at);

-- Signing secrets are sealed at rest (internal/seal, under a key derived
-- from BROLL_SIGNING_KEY, which SQL does not have): every secret written
-- from now on is sealed ('sealed:v1:...'). Those already stored in
-- plaintext (whsec_...) are sealed in Go, not here: by the worker when it
-- starts (webhook.SealSecrets, again hourly) and by `brollctl migrate`
-- when it is given BROLL_SIGNING_KEY. Until then they still sign.
ALTER TABLE webhook_secrets DROP CONSTRAINT webhook_secrets_secret_check;
ALTER TABLE webhook_secrets ADD CONSTRAINT webhook_secrets_secret_check
    CHECK (secret LIKE 'sealed:v1:%' OR secret LIKE 'whsec\_%');

-- Fair delivery: a claimed delivery is in flight until leased_until (its
-- lease; cleared when the attempt is recorded), so that every worker's
-- claim can hold each endpoint and each account to its share of attempts
-- in flight, and each endpoint's oldest due deliveries are found by index.
ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz;
CREATE INDEX webhook_deliveries_in_flight_idx ON webhook_deliveries (endpoint_id)
    WHERE state = 'pending' AND leased_until IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE state = 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_endpoint_due_idx;
DROP INDEX webhook_deliveries_in_flight_idx;
ALTER TABLE webhook_deliveries DROP COLUMN leased_until;
-- Sealed secrets cannot be opened in SQL: going down leaves them sealed,
-- and the constraint that admits them stays.
DROP INDEX webhook_endpoints_root_key_idx;
ALTER TABLE webhook_endpoints ALTER COLUMN root_key_id DROP NOT NULL;
ALTER TABLE webhook_endpoints RENAME COLUMN root_key_id TO created_by;
