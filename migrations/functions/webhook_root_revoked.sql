-- broll_webhook_root_revoked: the trigger function of api_keys (the trigger,
-- api_keys_root_revoked_webhooks, is made by 00026_revoked_root_webhooks.sql)
-- that ends a root key's webhook endpoints when the key is revoked, in the
-- revoking transaction. It fires for the row's change, whoever writes it:
-- tenancy's revocation (the dashboard, brollctl and the API all call it)
-- needs to know nothing of endpoints, and a revocation by the previous
-- release during a rolling upgrade ends them too.
--
-- Each endpoint of the root key is disabled (saying why), its signing
-- secrets are destroyed and its pending deliveries are given up (failed):
--   - the fan-out (webhook_fanout.sql) queues nothing for a disabled
--     endpoint, so no event written after the revocation commits reaches it
--     (the key.revoked events of the revocation itself included);
--   - the worker claims only pending deliveries of enabled endpoints, and its
--     claim re-checks each delivery's state under the row lock, so none
--     queued before the revocation is sent once it commits;
--   - with no secret, nothing could be signed for it again, which is why
--     such an endpoint cannot be enabled again (webhook.Service.Enable).
-- Endpoints count toward their own root key's cap only, so a revoked root
-- key's endpoints take no other integration's place; they stay listed for
-- the account's owners, who may delete them.
--
-- Locks are taken in the order the worker's record of an attempt takes them
-- (the endpoint, then its delivery), so the two never wait on each other in
-- a circle. The trigger fires only when a root key's revoked_at goes from
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
    UPDATE webhook_deliveries SET state = 'failed', leased_until = NULL
    WHERE endpoint_id = ANY (ended) AND state = 'pending';
    RETURN NULL;
END;
$$;
