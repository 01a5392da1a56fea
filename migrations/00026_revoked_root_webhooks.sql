-- +goose Up
-- Endpoints of root keys revoked before revocation ended them
-- (migrations/functions/webhook_root_revoked.sql does it from now on, in
-- the revocation's transaction) are ended the same way: disabled, saying
-- why, their signing secrets destroyed and their pending deliveries given
-- up, so that nothing more is sent to them and the account's owners see
-- why they are off.
UPDATE webhook_endpoints w SET enabled = false, disabled_at = now(),
    disabled_reason = 'disabled: its root key was revoked'
FROM api_keys k
WHERE k.id = w.root_key_id AND k.revoked_at IS NOT NULL;
DELETE FROM webhook_secrets s USING webhook_endpoints w, api_keys k
WHERE w.id = s.endpoint_id AND k.id = w.root_key_id AND k.revoked_at IS NOT NULL;
UPDATE webhook_deliveries d SET state = 'failed', leased_until = NULL
FROM webhook_endpoints w, api_keys k
WHERE w.id = d.endpoint_id AND k.id = w.root_key_id AND k.revoked_at IS NOT NULL AND d.state = 'pending';
-- Each root key's endpoints are counted, for its cap, by the index
-- webhook_endpoints_root_key_idx (00016).

-- +goose Down
-- Destroyed secrets cannot come back: the endpoints stay disabled, and
-- there is nothing to undo.
