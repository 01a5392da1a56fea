-- broll_webhook_root_revoked: ends the webhook endpoints of root key
-- in_root once it is revoked, in the revocation's own transaction (tenancy's
-- revocation, which every surface calls: the dashboard, brollctl, the API,
-- runs it for each root key it revokes), and returns how many it ended.
-- Whoever revokes a key needs to know nothing of endpoints.
--
-- Each endpoint of the root key is disabled (saying why), its signing
-- secrets are destroyed and its pending deliveries are given up (failed):
--   - the fan-out (webhook_fanout.sql) queues nothing for a disabled
--     endpoint, so no event written after the revocation commits reaches it;
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
-- a circle. A key that is not a revoked root key ends nothing; a second
-- revocation changes nothing but what a first one may have left behind.
CREATE OR REPLACE FUNCTION broll_webhook_root_revoked(in_root uuid)
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    reason constant text := 'disabled: its root key was revoked';
    ended uuid[];
BEGIN
    WITH e AS (
        UPDATE webhook_endpoints w SET enabled = false,
            disabled_at = CASE WHEN w.disabled_reason = reason THEN w.disabled_at ELSE now() END,
            disabled_reason = reason
        FROM api_keys k
        WHERE w.root_key_id = in_root AND k.id = in_root AND k.kind = 'root' AND k.revoked_at IS NOT NULL
        RETURNING w.id
    )
    SELECT coalesce(array_agg(id), '{}') INTO ended FROM e;
    DELETE FROM webhook_secrets WHERE endpoint_id = ANY (ended);
    UPDATE webhook_deliveries SET state = 'failed', leased_until = NULL
    WHERE endpoint_id = ANY (ended) AND state = 'pending';
    RETURN cardinality(ended);
END;
$$;
