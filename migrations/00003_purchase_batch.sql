-- +goose Up
-- The purchase statement as a function, so that one definition serves a
-- single purchase and a batch. See billing/purchase_sql.go for the why of
-- each step. $1 account, $2 key, $3 video ids, $4 expected total or NULL,
-- $5 whether to charge the pool here (false: the caller charges the sum).
-- +goose StatementBegin
CREATE FUNCTION broll_purchase(uuid, uuid, uuid[], bigint, boolean)
RETURNS TABLE (r_quote bigint, r_balance bigint, r_purchase_id uuid, r_video_id uuid,
               r_price_cents bigint, r_purchased_at timestamptz, r_owned boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
-- plpgsql (not sql) so that the plan of this statement is cached per session.
RETURN QUERY
WITH req AS (
    SELECT DISTINCT unnest($3) AS video_id
), owned AS (
    SELECT p.id, p.video_id, p.price_cents, p.purchased_at
    FROM purchases p
    WHERE p.api_key_id = $2 AND p.video_id IN (SELECT video_id FROM req)
), priced AS (
    SELECT v.id, t.price_cents, v.difficulty
    FROM videos v JOIN tiers t ON t.name = v.difficulty
    WHERE v.id IN (SELECT video_id FROM req) AND v.retired_at IS NULL
      AND v.id NOT IN (SELECT video_id FROM owned)
), checks AS (
    SELECT broll_purchase_check(
        (SELECT count(*) FROM req) - (SELECT count(*) FROM owned) - (SELECT count(*) FROM priced),
        (SELECT coalesce(sum(price_cents), 0) FROM priced)::bigint,
        $4) AS quote
), ins AS (
    INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier)
    SELECT $1, $2, p.id, p.price_cents, p.difficulty
    FROM priced p, checks
    ORDER BY p.id
    ON CONFLICT (api_key_id, video_id) DO NOTHING
    RETURNING id, video_id, price_cents, purchased_at
), led AS (
    INSERT INTO ledger (account_id, amount_cents, kind, purchase_id, api_key_id)
    SELECT $1, -price_cents, 'purchase', id, $2 FROM ins WHERE price_cents > 0
), charge AS (
    UPDATE accounts SET balance_cents = balance_cents - (SELECT sum(price_cents) FROM ins)
    WHERE id = $1 AND $5 AND EXISTS (SELECT 1 FROM ins WHERE price_cents > 0)
    RETURNING balance_cents
)
SELECT c.quote, (SELECT balance_cents FROM charge), r.id, r.video_id, r.price_cents, r.purchased_at, r.owned
FROM checks c
LEFT JOIN (
    SELECT id, video_id, price_cents, purchased_at, false AS owned FROM ins
    UNION ALL
    SELECT id, video_id, price_cents, purchased_at, true FROM owned
) r ON true;
END;
$$;
-- +goose StatementEnd

-- Many purchases of one account in one transaction. Each runs in its own
-- subtransaction (a failing one is rolled back alone and reports its error)
-- and is checked against the pool as read at the start; the pool is charged
-- once, for the sum, at the very end. So the account row lock is held only
-- for that last UPDATE and the commit, and concurrent batches do their
-- inserts in parallel. If the pool shrank meanwhile (another batch), the
-- guarded UPDATE finds nothing and BR503 aborts the batch as a whole; its
-- purchases are then retried.
-- jobs: [{"key": uuid, "ids": [uuid...], "expected": cents|null}, ...]
-- The last row (b_job = -1) carries the balance after the charge.
-- +goose StatementBegin
CREATE FUNCTION broll_purchase_batch(account uuid, jobs jsonb)
RETURNS TABLE (b_job int, b_sqlstate text, b_detail text, b_constraint text,
               b_quote bigint, b_balance bigint, b_purchase_id uuid, b_video_id uuid,
               b_price_cents bigint, b_purchased_at timestamptz, b_owned boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    i int;
    r record;
    st text;
    det text;
    con text;
    available bigint;
    total bigint := 0;
    cost bigint;
    after bigint;
    q bigint;
    ids uuid[];
    vids uuid[];
    prices bigint[];
    ats timestamptz[];
    owns boolean[];
BEGIN
    SELECT balance_cents INTO available FROM accounts WHERE id = account;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'account not found' USING ERRCODE = 'BR404';
    END IF;
    FOR i IN 0 .. jsonb_array_length(jobs) - 1 LOOP
        BEGIN
            cost := 0; q := 0;
            ids := '{}'; vids := '{}'; prices := '{}'; ats := '{}'; owns := '{}';
            FOR r IN
                SELECT * FROM broll_purchase(account, (jobs->i->>'key')::uuid,
                    ARRAY(SELECT jsonb_array_elements_text(jobs->i->'ids'))::uuid[],
                    (jobs->i->>'expected')::bigint, false)
            LOOP
                q := r.r_quote;
                CONTINUE WHEN r.r_purchase_id IS NULL;
                ids := ids || r.r_purchase_id; vids := vids || r.r_video_id;
                prices := prices || r.r_price_cents; ats := ats || r.r_purchased_at; owns := owns || r.r_owned;
                IF NOT r.r_owned THEN
                    cost := cost + r.r_price_cents;
                END IF;
            END LOOP;
            IF cost > available - total THEN
                -- Rolls back this purchase's rows alone.
                RAISE EXCEPTION 'insufficient credits' USING ERRCODE = '23514',
                    CONSTRAINT = 'accounts_balance_not_negative';
            END IF;
            total := total + cost;
            RETURN QUERY SELECT i, NULL::text, NULL::text, NULL::text, q, NULL::bigint,
                u.pid, u.vid, u.price, u.at, u.own
                FROM unnest(ids, vids, prices, ats, owns) AS u(pid, vid, price, at, own);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, det = PG_EXCEPTION_DETAIL, con = CONSTRAINT_NAME;
            RETURN QUERY SELECT i, st, det, con, NULL::bigint, NULL::bigint, NULL::uuid, NULL::uuid,
                NULL::bigint, NULL::timestamptz, NULL::boolean;
        END;
    END LOOP;
    IF total > 0 THEN
        UPDATE accounts SET balance_cents = balance_cents - total
        WHERE id = account AND balance_cents >= total
        RETURNING balance_cents INTO after;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the pool changed during the batch' USING ERRCODE = 'BR503';
        END IF;
    ELSE
        SELECT balance_cents INTO after FROM accounts WHERE id = account;
    END IF;
    RETURN QUERY SELECT -1, NULL::text, NULL::text, NULL::text, NULL::bigint, after,
        NULL::uuid, NULL::uuid, NULL::bigint, NULL::timestamptz, NULL::boolean;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION broll_purchase_batch(uuid, jsonb);
DROP FUNCTION broll_purchase(uuid, uuid, uuid[], bigint, boolean);
