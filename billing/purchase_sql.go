package billing

// purchaseSQL buys videos in ONE statement (one round trip, one implicit
// transaction), which keeps the account row lock, the hot spot shared by
// every key of an account, held only from the charge to the commit:
//
//   - broll_purchase_check raises BR404 for unknown (or retired, not owned)
//     videos and BR409 for a wrong expected total; raising aborts everything.
//   - New purchases are inserted in id order (no deadlock between two
//     requests of one key); a concurrent purchase of the same video by the
//     same key conflicts and is not charged.
//   - The charge runs only when something new was bought; the CHECK
//     constraint accounts_balance_not_negative refuses an overdraft, which
//     aborts the statement (402).
//
// $1 account, $2 key, $3 video ids, $4 expected total (NULL: none).
const purchaseSQL = `
WITH req AS (
    SELECT DISTINCT unnest($3::uuid[]) AS video_id
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
        $4::bigint) AS quote
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
    WHERE id = $1 AND EXISTS (SELECT 1 FROM ins WHERE price_cents > 0)
    RETURNING balance_cents
)
SELECT c.quote, (SELECT balance_cents FROM charge), r.id, r.video_id, r.price_cents, r.purchased_at, r.owned
FROM checks c
LEFT JOIN (
    SELECT id, video_id, price_cents, purchased_at, false AS owned FROM ins
    UNION ALL
    SELECT id, video_id, price_cents, purchased_at, true FROM owned
) r ON true`
