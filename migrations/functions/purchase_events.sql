-- broll_purchase_events: the outbox rows of a purchase batch, written after
-- broll_purchase_batch in the same implicit transaction (one pipeline, one
-- Sync: billing/batcher.go), so the events commit with the purchases or not
-- at all:
--   purchase.completed  one per job that bought something;
--   balance.low         when the batch took the live pool across the
--                       account's threshold (in_threshold when the account
--                       has none of its own). Never for a test batch, whose
--                       events say livemode false and carry the test
--                       balance.
-- It reads the purchases by the ids the jobs chose, so a batch run again
-- after a lost connection finds the same purchases and the same event ids
-- (made from them by the caller), and inserts nothing twice. Events no
-- enabled endpoint of the account subscribes to are not written: the
-- fan-out would give them no delivery anyway, and an account without
-- endpoints pays for no event rows on its purchase path.
--
-- In: the account; per bought line its event id (one per job, repeated on
-- the job's lines), purchase id and W3C trace id ('' for none); the
-- balance.low event id ('' when nothing was bought); the default
-- threshold; livemode.
--
-- Why a function: the statement runs while the batch holds the account
-- row (until the commit), and sent on its own Postgres planned it anew on
-- nearly every call (a custom plan per call for its arrays, 0.3 ms a batch
-- measured by pg_stat_statements). plpgsql keeps one generic plan per
-- session, which is the right one for every call: each access is by key.
CREATE OR REPLACE FUNCTION broll_purchase_events(
    in_account uuid, in_event text[], in_purchase uuid[], in_low text, in_threshold bigint,
    in_livemode boolean, in_trace text[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    -- An account without an enabled endpoint skips the statement below, whose
    -- start alone (two inserts with their indexes) costs more than this.
    IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE account_id = in_account AND enabled) THEN
        RETURN;
    END IF;
    WITH bought AS (
        SELECT l.event_id, l.trace_id, p.id, p.video_id, p.api_key_id, p.customer_email, p.price_cents, p.purchased_at
        FROM unnest(in_event, in_purchase, in_trace) AS l(event_id, purchase_id, trace_id)
        JOIN purchases p ON p.id = l.purchase_id AND p.account_id = in_account
    ), subscribed AS (
        SELECT DISTINCT unnest(events) AS type FROM webhook_endpoints WHERE account_id = in_account AND enabled
    ), acct AS (
        SELECT balance_cents, coalesce(low_balance_cents, in_threshold) AS threshold
        FROM accounts WHERE id = in_account AND in_livemode
        UNION ALL
        SELECT balance_cents, NULL FROM test_balances WHERE account_id = in_account AND NOT in_livemode
    ), completed AS (
        INSERT INTO webhook_events (id, account_id, type, livemode, trace_id, data)
        SELECT b.event_id, in_account, 'purchase.completed', in_livemode, nullif(min(b.trace_id), ''), jsonb_build_object(
            'key', CASE WHEN k.id IS NULL THEN NULL
                        ELSE jsonb_build_object('id', k.id, 'kind', k.kind, 'label', k.label) END,
            'customer_email', min(b.customer_email),
            'purchases', jsonb_agg(jsonb_build_object('purchase_id', b.id, 'video_id', b.video_id,
                'price', round(b.price_cents / 100.0, 2), 'purchased_at', b.purchased_at) ORDER BY b.id),
            'amount', round(sum(b.price_cents) / 100.0, 2),
            'balance', round((SELECT balance_cents FROM acct) / 100.0, 2),
            'currency', 'USD')
        FROM bought b LEFT JOIN api_keys k ON k.id = b.api_key_id
        WHERE EXISTS (SELECT 1 FROM subscribed WHERE type = 'purchase.completed')
        GROUP BY b.event_id, k.id, k.kind, k.label
        ON CONFLICT (id) DO NOTHING
    )
    INSERT INTO webhook_events (id, account_id, type, data)
    SELECT in_low, in_account, 'balance.low', jsonb_build_object(
        'balance', round(a.balance_cents / 100.0, 2), 'threshold', round(a.threshold / 100.0, 2), 'currency', 'USD')
    FROM acct a
    WHERE in_low <> '' AND in_livemode AND EXISTS (SELECT 1 FROM subscribed WHERE type = 'balance.low')
      AND a.balance_cents < a.threshold
      AND a.balance_cents + (SELECT coalesce(sum(price_cents), 0) FROM bought) >= a.threshold
    ON CONFLICT (id) DO NOTHING;
END;
$$;
