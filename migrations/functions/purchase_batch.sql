-- broll_purchase_batch: every rule of a purchase, for a batch of purchases
-- ("jobs") of ONE account, in one statement. Every purchase path goes
-- through it (v1 REST, MCP, legacy v0, dry runs); billing/batcher.go builds
-- the arrays and billing/purchase_verdict.go turns the verdicts into answers.
-- `brollctl migrate` applies this file with CREATE OR REPLACE after the
-- numbered migrations, so a rule change is a diff of this file alone.
--
-- In, as arrays (one element per job, numbered from 0 by position):
--   in_key       the buying key, or NULL for a legacy (v0) buyer
--   in_email     the legacy buyer's customer email ('' for none; '' for keys)
--   in_expected  the expected total in cents, or NULL
--   in_dry       quote only: priced and checked, nothing written
-- and one element per requested video ("line"):
--   in_line_job    the job it belongs to
--   in_line_video  the video
--   in_purchase    the id its purchase gets if bought; the caller picks
--                  them, so that after a lost connection it can tell from
--                  the rows what its batch committed
--   in_license     the licence id that purchase gets (lic_ and 32 hex
--                  digits, random; billing/license.NewID), chosen with it
-- and for the whole batch:
--   in_livemode      false: every job is a test key's (the batcher groups
--                    by mode), paid from the account's test_balances row
--   in_test_balance  what that row starts with when this batch makes it
--                    (BROLL_TEST_BALANCE)
-- A job's videos are distinct and no two jobs of a batch have one buyer
-- (the batcher sees to both), so (buyer, video) names one line.
--
-- Out: one row per line, carrying its job's verdict and the line's
-- purchase (bought now or owned before, with its licence id; its price is
-- the quote when not bought):
--   bought               charged (lines already owned come back, not charged)
--   owned                nothing new to buy: every line was owned already
--   quoted               a dry run's quote
--   unknown              some line names no video, or one not on sale that
--                        the buyer does not own: retired, or its media not
--                        (yet) passed by the probe (r_known false on those
--                        lines). Media that is not sound is never charged:
--                        the rule is here, whatever the caller checked.
--   price_changed        r_quote differs from in_expected
--   insufficient_credits r_quote exceeds r_available, what the pool held at
--                        this job's turn in arrival order
--   spend_limit_exceeded r_quote on top of r_spent, what the key spent in
--                        the period of its limit (r_limit, r_period), would
--                        pass the limit; the period ends at r_resets_at
--                        (NULL for 'total')
-- A refused job writes nothing. r_balance is the pool after the batch.
--
-- The account row is locked late, to keep it held for as short a time as
-- possible: every batch of an account queues on it, and it is held until
-- the commit, so the work done while holding it bounds the account's
-- purchases per second. Reading the lines and inserting the purchases (most
-- of a batch's work: seven indexes and three foreign keys a row) come
-- before it; only the money is decided under it. That order is still
-- deadlock-free:
--   - purchase rows are inserted in (key, email, video) order, so two
--     batches that insert the same (buyer, video) wait for each other in
--     one order, and neither holds the account row while it waits;
--   - the account row is locked FOR NO KEY UPDATE (what an UPDATE of its
--     balance takes), which lets the inserts' foreign-key checks (FOR KEY
--     SHARE) of other batches pass while it is held;
--   - under the lock a batch writes only its own rows (ledger, events), the
--     spend counters of its keys, which only a batch holding this lock
--     writes, and the pool: it never waits for a purchase row.
-- Under that lock the verdicts are exact: the running sum of the jobs'
-- quotes is checked against the balance the lock protects, so the one
-- guarded charge at the end cannot fail; the CHECK
-- accounts_balance_not_negative stays behind it all the same. The purchases
-- of a job the lock's verdict refuses (insufficient credits, or its key's
-- spend limit) were inserted before it and are deleted again, in the same
-- transaction: nobody else ever saw them. Each delete's foreign-key check
-- of the ledger reads ledger_purchase_idx (00038), not the whole ledger.
--
-- A purchase the buyer makes in another batch at the same time is found by
-- the insert (ON CONFLICT DO NOTHING waits for that batch and skips the
-- row), not by the read before it: such a line comes back with no
-- purchase, is not charged, and the caller runs the batch again, which
-- then finds it owned (billing/batcher.go).
--
-- Spend limits are checked under the same account lock: every charge of a
-- key goes through this statement and adds to its key_spend row in the
-- statement that charges the pool, so the counters read after the lock
-- hold every charge committed before. A batch has one job per buyer, so a
-- key's check is its counter plus its own quote, with no running sum.
--
-- Test mode goes through the same rules with another pool: a test batch
-- locks, reads and charges its account's test_balances row (made on first
-- use, with a ledger row for what it starts with) and never the account
-- row, so test traffic does not queue behind live purchases; its purchases
-- and ledger rows say livemode = false.
--
-- CREATE OR REPLACE keeps the function's arguments and result columns: a
-- change of either makes a new form beside the old one, which the previous
-- release keeps calling during a rolling upgrade, and a later numbered
-- migration drops the old form (see migrations/README.md). The form before
-- test mode (eight arguments) is dropped by 00021_drop_old_purchase_batch.sql;
-- the form before licences (ten arguments, no r_license_id) stays until the
-- release after the one that added licences (its purchases get a licence id
-- from the column's default).
--
-- The steps, in order (each is marked below):
--   1. lines: each requested video, what it costs, whether it is on sale
--      and whether the buyer owns it already; per job its quote and its
--      verdict before money (unknown, price_changed, quoted, owned, or
--      pay); the purchases of the paying jobs' lines not owned yet,
--      inserted; all of it kept in arrays for step 3;
--   2. lock the pool the batch charges (when some job pays);
--   3. priced: the paying jobs' spend limits, read under the lock
--      (spend_limit_exceeded, or still pay);
--   4. pool: the balance the batch draws from;
--   5. run: the jobs that pay, in arrival order, against that balance:
--      bought or insufficient_credits;
--   6. decided, limited: the verdicts and limits gathered per job;
--   7. refused: the purchases of step 1 whose job was not bought, deleted;
--   8. led: the bought purchases' ledger rows;
--   9. charge: the pool charged once, by the sum of what was bought;
--  10. counted: the keys' spend counters moved by their charges;
--  11. the answer: one row per line.
-- Steps 7 to 10 write; Postgres runs every data-modifying CTE exactly once,
-- whether or not the final SELECT reads it, and all of them see the
-- snapshot the statement started with, taken after the lock: it holds
-- every batch that held the lock before.
--
-- plpgsql caches the statements' plans for the session; force_generic_plan
-- keeps it from re-planning per call for the array sizes (custom plans buy
-- nothing here: every access is by key through a unique index).
CREATE OR REPLACE FUNCTION broll_purchase_batch(
    in_account uuid, in_key uuid[], in_email text[], in_expected bigint[], in_dry boolean[],
    in_line_job int[], in_line_video uuid[], in_purchase uuid[], in_livemode boolean, in_test_balance bigint,
    in_license text[])
RETURNS TABLE (r_job int, r_verdict text, r_quote bigint, r_available bigint, r_balance bigint,
               r_video_id uuid, r_known boolean, r_purchase_id uuid, r_price_cents bigint,
               r_purchased_at timestamptz, r_owned boolean,
               r_limit bigint, r_period text, r_spent bigint, r_resets_at timestamptz,
               r_license_id text, r_license_revoked boolean)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    -- Step 1's findings, per line (in the input's order) and per job.
    line_known boolean[];
    line_price bigint[];
    line_owned_id uuid[];
    line_owned_price bigint[];
    line_owned_at timestamptz[];
    line_owned_license text[];
    line_owned_revoked boolean[];
    job_quote bigint[];
    job_verdict text[];
    -- The purchases step 1 inserted.
    inserted uuid[];
BEGIN
    -- Per-job values are read from the input arrays by subscript (job + 1)
    -- and per-job verdicts are gathered into arrays the same way, so no
    -- step joins a batch with itself.
    WITH lines AS (
        -- Step 1: one row per requested video. A line is known when the
        -- video exists and is on sale (not retired, media passed the probe)
        -- or the buyer owns it already: an owned clip stays the buyer's
        -- whatever became of it since, and is returned, never charged.
        SELECT l.n, l.job, l.video, l.new_id, l.new_license, in_key[l.job + 1] AS key, in_email[l.job + 1] AS email,
               o.id AS owned_id, o.price_cents AS owned_price, o.purchased_at AS owned_at,
               o.license_id AS owned_license, o.license_revoked_at IS NOT NULL AS owned_license_revoked,
               v.id IS NOT NULL
                 AND (o.id IS NOT NULL OR (v.retired_at IS NULL AND v.media_status = 'ready')) AS known,
               v.price_cents AS price, v.difficulty AS tier
        FROM unnest(in_line_job, in_line_video, in_purchase, in_license) WITH ORDINALITY
             AS l(job, video, new_id, new_license, n)
        -- The price is the clip's (videos.price_cents, kept by the rule of
        -- clip_price.sql): what the lists and the clip read show.
        LEFT JOIN videos v ON v.id = l.video
        -- What the buyer owns: a key its own purchases; a legacy buyer the
        -- account's v0 purchases under its email (purchases_legacy_unique;
        -- the rule is owned.sql's).
        LEFT JOIN LATERAL (
            SELECT p.id, p.price_cents, p.purchased_at, p.license_id, p.license_revoked_at
            FROM broll_owned_purchase(in_key[l.job + 1], l.video) p
            WHERE in_key[l.job + 1] IS NOT NULL
            UNION ALL
            SELECT p.id, p.price_cents, p.purchased_at, p.license_id, p.license_revoked_at
            FROM broll_legacy_owned_purchase(in_account, in_email[l.job + 1], l.video) p
            WHERE in_key[l.job + 1] IS NULL
        ) o ON true
    ), jobs AS (
        -- Per job, the quote (the known lines it does not own yet) and
        -- every verdict that needs no money, in this order of precedence: a
        -- job with an unknown line buys nothing; a changed price is refused
        -- before a dry run quotes it; a job owning every line is answered
        -- without a charge. What is left is 'pay', decided under the lock.
        SELECT g.job, g.quote,
               CASE
                   WHEN g.unknown THEN 'unknown'
                   WHEN in_expected[g.job + 1] IS NOT NULL AND in_expected[g.job + 1] <> g.quote THEN 'price_changed'
                   WHEN in_dry[g.job + 1] THEN 'quoted'
                   WHEN g.all_owned THEN 'owned'
                   ELSE 'pay'
               END AS verdict
        FROM (
            SELECT l.job, coalesce(sum(l.price) FILTER (WHERE l.known AND l.owned_id IS NULL), 0)::bigint AS quote,
                   bool_or(NOT l.known) AS unknown, bool_and(l.owned_id IS NOT NULL) AS all_owned
            FROM lines l GROUP BY l.job
        ) g
    ), ins AS (
        -- The purchases of the paying jobs' lines not owned yet, under the
        -- ids and licence ids the caller chose, in the lock order (key,
        -- email, video). source is the account's own, recorded on legacy
        -- purchases.
        INSERT INTO purchases (id, account_id, api_key_id, video_id, price_cents, tier, legacy, source,
                               customer_email, purchased_at, livemode, license_id)
        SELECT l.new_id, in_account, l.key, l.video, l.price, l.tier, l.key IS NULL,
               CASE WHEN l.key IS NULL THEN (SELECT a.source FROM accounts a WHERE a.id = in_account) END,
               CASE WHEN l.key IS NULL THEN nullif(l.email, '') END, now(), in_livemode, l.new_license
        FROM lines l JOIN jobs j ON j.job = l.job
        WHERE j.verdict = 'pay' AND l.owned_id IS NULL
        ORDER BY l.key, l.email, l.video
        -- Both uniqueness rules, (key, video) and the legacy one: a row
        -- that another transaction inserted anyway is skipped, not charged.
        ON CONFLICT DO NOTHING
        RETURNING id
    )
    SELECT (SELECT array_agg(known ORDER BY n) FROM lines), (SELECT array_agg(price ORDER BY n) FROM lines),
           (SELECT array_agg(owned_id ORDER BY n) FROM lines), (SELECT array_agg(owned_price ORDER BY n) FROM lines),
           (SELECT array_agg(owned_at ORDER BY n) FROM lines), (SELECT array_agg(owned_license ORDER BY n) FROM lines),
           (SELECT array_agg(owned_license_revoked ORDER BY n) FROM lines),
           (SELECT array_agg(quote ORDER BY job) FROM jobs), (SELECT array_agg(verdict ORDER BY job) FROM jobs),
           (SELECT coalesce(array_agg(id), '{}') FROM ins)
    INTO line_known, line_price, line_owned_id, line_owned_price, line_owned_at, line_owned_license,
         line_owned_revoked, job_quote, job_verdict, inserted;

    -- Step 2: the lock, in a statement of its own, so that the snapshot of
    -- the next, taken after it, sees every batch that held it before. A
    -- batch in which no job pays takes none. A test batch makes its
    -- account's test balance row first if it has none, so that there is a
    -- row to lock.
    IF 'pay' = ANY (job_verdict) THEN
        IF in_livemode THEN
            PERFORM 1 FROM accounts WHERE id = in_account FOR NO KEY UPDATE;
        ELSE
            PERFORM broll_test_balance_open(in_account, in_test_balance);
            PERFORM 1 FROM test_balances WHERE account_id = in_account FOR UPDATE;
        END IF;
    END IF;

    RETURN QUERY
    WITH RECURSIVE priced AS (
        -- Step 3: a paying job whose key's limit the quote would pass is
        -- refused. Only keys with a limit are looked up: the others pay no
        -- extra read.
        SELECT (j.n - 1)::int AS job, j.quote, k.spend_limit_cents AS lim, k.spend_limit_period AS period,
               ks.spent, ks.resets_at,
               CASE WHEN j.verdict = 'pay' AND ks.spent + j.quote > k.spend_limit_cents THEN 'spend_limit_exceeded'
                    ELSE j.verdict END AS verdict
        FROM unnest(job_quote, job_verdict) WITH ORDINALITY AS j(quote, verdict, n)
        LEFT JOIN api_keys k ON k.id = in_key[j.n] AND k.spend_limit_cents IS NOT NULL
        LEFT JOIN key_spend s ON s.api_key_id = k.id
        LEFT JOIN LATERAL broll_key_spent(k.spend_limit_period, s.day_start, s.day_cents, s.month_start,
                                          s.month_cents, s.total_cents, k.created_at, now()) ks ON k.id IS NOT NULL
    ), pool AS (
        -- Step 4: what the batch may spend: the live pool (read under the
        -- lock of step 2) or the test balance.
        SELECT a.balance_cents FROM accounts a WHERE in_livemode AND a.id = in_account
        UNION ALL
        -- A quote before the first test purchase sees what the row will hold.
        SELECT coalesce((SELECT t.balance_cents FROM test_balances t WHERE t.account_id = in_account),
                        in_test_balance)
        WHERE NOT in_livemode
    ), run (job, quote, available, remaining, verdict) AS (
        -- Step 5: the running sum in arrival order: a job the pool cannot
        -- pay is refused and spends nothing, so a later, smaller one may
        -- still fit.
        SELECT -1, NULL::bigint, NULL::bigint, coalesce((SELECT balance_cents FROM pool), 0), NULL::text
        UNION ALL
        SELECT p.job, p.quote, r.remaining,
               r.remaining - CASE WHEN p.verdict = 'pay' AND p.quote <= r.remaining THEN p.quote ELSE 0 END,
               CASE WHEN p.verdict <> 'pay' THEN p.verdict
                    WHEN p.quote <= r.remaining THEN 'bought'
                    ELSE 'insufficient_credits' END
        FROM run r JOIN priced p ON p.job = r.job + 1
    ), decided AS (
        -- Step 6: the verdicts, quotes and what the pool held at each job's
        -- turn, as arrays by job (job 0 first), and in "limited" the limits
        -- each job's key was checked against, for the refusal's answer.
        SELECT array_agg(verdict ORDER BY job) AS verdict, array_agg(quote ORDER BY job) AS quote,
               array_agg(available ORDER BY job) AS available
        FROM run WHERE job >= 0
    ), limited AS (
        SELECT array_agg(lim ORDER BY job) AS lim, array_agg(period ORDER BY job) AS period,
               array_agg(spent ORDER BY job) AS spent, array_agg(resets_at ORDER BY job) AS resets_at
        FROM priced
    ), lines AS (
        -- Step 1's lines again, from its arrays. A line is bought when step
        -- 1 inserted its new id and its job was bought.
        SELECT l.job, l.video, l.new_id, l.new_license, in_key[l.job + 1] AS key,
               line_known[l.n] AS known, line_price[l.n] AS price, line_owned_id[l.n] AS owned_id,
               line_owned_price[l.n] AS owned_price, line_owned_at[l.n] AS owned_at,
               line_owned_license[l.n] AS owned_license, line_owned_revoked[l.n] AS owned_license_revoked,
               l.new_id = ANY (inserted) AS inserted, l.new_id = ANY (inserted) AND d.verdict[l.job + 1] = 'bought' AS bought
        FROM unnest(in_line_job, in_line_video, in_purchase, in_license) WITH ORDINALITY
             AS l(job, video, new_id, new_license, n), decided d
    ), refused AS (
        -- Step 7: what step 1 inserted for a job refused under the lock.
        DELETE FROM purchases
        WHERE id = ANY (ARRAY(SELECT l.new_id FROM lines l WHERE l.inserted AND NOT l.bought))
    ), led AS (
        -- Step 8: one ledger row per charged purchase (free clips move no
        -- money), so the ledger keeps summing to the pool.
        INSERT INTO ledger (account_id, amount_cents, kind, purchase_id, api_key_id, note, livemode)
        SELECT in_account, -l.price, 'purchase', l.new_id, l.key,
               CASE WHEN l.key IS NULL THEN 'legacy v0' ELSE '' END, in_livemode
        FROM lines l WHERE l.bought AND l.price > 0
        ORDER BY l.new_id
    ), charged AS (
        SELECT sum(l.price) AS cents FROM lines l WHERE l.bought AND l.price > 0
    ), charge_live AS (
        -- Step 9: the pool is charged once, by the sum of what was bought
        -- (not of what step 5 decided: a row skipped by ON CONFLICT costs
        -- nothing), on the live row or the test row.
        UPDATE accounts SET balance_cents = balance_cents - (SELECT cents FROM charged)
        WHERE in_livemode AND id = in_account AND (SELECT cents FROM charged) IS NOT NULL
        RETURNING balance_cents
    ), charge_test AS (
        UPDATE test_balances SET balance_cents = balance_cents - (SELECT cents FROM charged)
        WHERE NOT in_livemode AND account_id = in_account AND (SELECT cents FROM charged) IS NOT NULL
        RETURNING balance_cents
    ), charge AS (
        SELECT balance_cents FROM charge_live UNION ALL SELECT balance_cents FROM charge_test
    ), counted AS (
        -- Step 10: every key's counters move with its charges, limited or
        -- not, so that a limit set later starts from what was really spent.
        INSERT INTO key_spend AS s (api_key_id, day_start, day_cents, month_start, month_cents, total_cents)
        SELECT l.key, (now() AT TIME ZONE 'UTC')::date, sum(l.price),
               date_trunc('month', now() AT TIME ZONE 'UTC')::date, sum(l.price), sum(l.price)
        FROM lines l WHERE l.key IS NOT NULL AND l.bought AND l.price > 0
        GROUP BY l.key ORDER BY l.key
        ON CONFLICT (api_key_id) DO UPDATE SET
            day_cents = CASE WHEN s.day_start = EXCLUDED.day_start THEN s.day_cents ELSE 0 END + EXCLUDED.day_cents,
            day_start = EXCLUDED.day_start,
            month_cents = CASE WHEN s.month_start = EXCLUDED.month_start THEN s.month_cents ELSE 0 END + EXCLUDED.month_cents,
            month_start = EXCLUDED.month_start,
            total_cents = s.total_cents + EXCLUDED.total_cents
    )
    -- Step 11: one row per line, in job order, with its job's verdict. A
    -- bought line carries its new purchase; any other the purchase the
    -- buyer owned (or nothing), and its price is the quote. The balance is
    -- the pool after the charge, or as read when nothing was charged.
    SELECT l.job, d.verdict[l.job + 1], d.quote[l.job + 1], d.available[l.job + 1],
           coalesce((SELECT balance_cents FROM charge), (SELECT balance_cents FROM pool)),
           l.video, l.known,
           CASE WHEN l.bought THEN l.new_id ELSE l.owned_id END,
           CASE WHEN l.bought THEN l.price ELSE coalesce(l.owned_price, l.price) END,
           CASE WHEN l.bought THEN now() ELSE l.owned_at END,
           NOT l.bought,
           m.lim[l.job + 1], m.period[l.job + 1], m.spent[l.job + 1], m.resets_at[l.job + 1],
           CASE WHEN l.bought THEN l.new_license ELSE l.owned_license END,
           NOT l.bought AND l.owned_license_revoked
    FROM lines l, decided d, limited m
    ORDER BY l.job;
END;
$$;
