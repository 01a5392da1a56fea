-- +goose Up
-- A root key's revocation ends its webhook endpoints in the revoking
-- transaction: disabled, saying why, and their signing secrets destroyed,
-- so that nothing more is sent to them and they take no place under any
-- cap (the worker gives up their pending deliveries afterwards). The trigger's function is
-- migrations/functions/webhook_root_revoked.sql, which every migrate puts
-- in place; this is its first form, which the trigger needs to exist.
-- +goose StatementBegin
CREATE FUNCTION broll_webhook_root_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ended uuid[];
BEGIN
    WITH e AS (
        UPDATE webhook_endpoints SET enabled = false, disabled_at = now(),
            disabled_reason = 'disabled: its root key was revoked'
        WHERE root_key_id = NEW.id
        RETURNING id
    )
    SELECT coalesce(array_agg(id), '{}') INTO ended FROM e;
    DELETE FROM webhook_secrets WHERE endpoint_id = ANY (ended);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- Only a root key's first revocation: usage flushes and settings changes
-- never name revoked_at, so they never fire it.
CREATE TRIGGER api_keys_root_revoked_webhooks AFTER UPDATE OF revoked_at ON api_keys
    FOR EACH ROW WHEN (NEW.kind = 'root' AND OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
    EXECUTE FUNCTION broll_webhook_root_revoked();

-- Endpoints of root keys revoked before this are ended the same way, and
-- their pending deliveries given up at once.
UPDATE webhook_endpoints w SET enabled = false, disabled_at = now(),
    disabled_reason = 'disabled: its root key was revoked'
FROM api_keys k
WHERE k.id = w.root_key_id AND k.revoked_at IS NOT NULL;
DELETE FROM webhook_secrets s USING webhook_endpoints w, api_keys k
WHERE w.id = s.endpoint_id AND k.id = w.root_key_id AND k.revoked_at IS NOT NULL;
UPDATE webhook_deliveries d SET state = 'failed', leased_until = NULL
FROM webhook_endpoints w, api_keys k
WHERE w.id = d.endpoint_id AND k.id = w.root_key_id AND k.revoked_at IS NOT NULL AND d.state = 'pending';

-- +goose Down
-- Destroyed secrets cannot come back: the endpoints ended stay disabled.
DROP TRIGGER api_keys_root_revoked_webhooks ON api_keys;
DROP FUNCTION broll_webhook_root_revoked();
