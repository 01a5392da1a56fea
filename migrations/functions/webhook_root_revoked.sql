-- broll_webhook_root_revoked: the trigger function of api_keys (the trigger,
-- api_keys_root_revoked_webhooks, is made by 00026_revoked_root_webhooks.sql)
-- that ends a root key's webhook endpoints when the key is revoked, in the
-- revoking transaction. It fires for the row's change, whoever writes it:
-- tenancy's revocation (the dashboard, brollctl and the API all call it)
-- needs to know nothing of endpoints, and a revocation by the previous
-- release during a rolling upgrade ends them too.
--
-- Each endpoint of the root key is disabled (saying why) and its signing
-- secrets are destroyed:
--   - the fan-out (webhook_fanout.sql) queues nothing for a disabled
--     endpoint, so no event written after the revocation commits reaches it
--     (the key.revoked events of the revocation itself included);
--   - the worker claims only deliveries of enabled endpoints, so none queued
--     before the revocation is claimed once it commits; the worker gives
--     them up later, in batches (webhook.Deliverer.Prune), so that the
--     revocation's cost is its endpoints', however long their backlog;
--   - with no secret, nothing could be signed for it again, which is why
--     such an endpoint cannot be enabled again (webhook.Service.Enable).
--     A delivery claimed anyway could not be sent: an attempt without a
--     secret fails before any request.
-- Endpoints count toward their own root key's cap only, so a revoked root
-- key's endpoints take no other integration's place; they stay listed for
-- the account's owners, who may delete them.
--
-- The trigger fires only when a root key's revoked_at goes from
-- NULL to a time: a second revocation changes nothing.
CREATE OR REPLACE FUNCTION broll_webhook_root_revoked() RETURNS trigger
LANGUAGE plpgsql
AS $$
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
