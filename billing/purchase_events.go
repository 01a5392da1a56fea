package billing

import (
	"encoding/hex"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/money"
	"broll/internal/outbox"
)

// DefaultLowBalanceThreshold is the balance below which an account without
// a threshold of its own gets balance.low.
const DefaultLowBalanceThreshold = money.Cents(1000)

// DefaultTestBalance is what an account's test balance starts with unless
// the service is told otherwise (BROLL_TEST_BALANCE).
const DefaultTestBalance = money.Cents(100000)

// purchaseEventsSQL writes the outbox rows of a purchase batch: one
// purchase.completed per job that bought something, and balance.low when the
// batch took the balance across the account's threshold. A test batch's
// events say livemode false, carry the test balance, and never include
// balance.low, which is about the live pool alone. It runs after the
// batch statement in the same implicit transaction (one pipeline, one Sync),
// so the events commit with the purchases or not at all. It reads the
// purchases by the ids the jobs chose, so a batch run again after a lost
// connection finds the same purchases and the same event ids, and inserts
// nothing twice. Events no enabled endpoint of the account subscribes to
// are not written: the fan-out would give them no delivery anyway.
//
// $1 account, $2 event id per line, $3 purchase id per line, $4 the
// balance.low event id (empty when nothing was bought), $5 the default
// threshold in cents, $6 livemode, $7 the trace id per line ("" for none).
const purchaseEventsSQL = `
WITH bought AS (
    SELECT l.event_id, l.trace_id, p.id, p.video_id, p.api_key_id, p.customer_email, p.price_cents, p.purchased_at
    FROM unnest($2::text[], $3::uuid[], $7::text[]) AS l(event_id, purchase_id, trace_id)
    JOIN purchases p ON p.id = l.purchase_id AND p.account_id = $1
), subscribed AS (
    -- An event nobody subscribes to would never be delivered: an account
    -- without endpoints pays for no event rows on its purchase path.
    SELECT DISTINCT unnest(events) AS type FROM webhook_endpoints WHERE account_id = $1 AND enabled
), acct AS (
    SELECT balance_cents, coalesce(low_balance_cents, $5) AS threshold FROM accounts WHERE id = $1 AND $6
    UNION ALL
    SELECT balance_cents, NULL FROM test_balances WHERE account_id = $1 AND NOT $6
), completed AS (
    INSERT INTO webhook_events (id, account_id, type, livemode, trace_id, data)
    SELECT b.event_id, $1, 'purchase.completed', $6, nullif(min(b.trace_id), ''), jsonb_build_object(
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
SELECT $4, $1, 'balance.low', jsonb_build_object(
    'balance', round(a.balance_cents / 100.0, 2), 'threshold', round(a.threshold / 100.0, 2), 'currency', 'USD')
FROM acct a
WHERE $4 <> '' AND $6 AND EXISTS (SELECT 1 FROM subscribed WHERE type = 'balance.low')
  AND a.balance_cents < a.threshold
  AND a.balance_cents + (SELECT coalesce(sum(price_cents), 0) FROM bought) >= a.threshold
ON CONFLICT (id) DO NOTHING`

// eventNamespace makes event ids from purchase ids (uuid v5), so that every
// run of a batch names its events alike.
var eventNamespace = uuid.MustParse("5f0b8a3e-8f3c-4d1e-9a55-2f4c1d7b9e60")

func eventID(typ string, purchase uuid.UUID) string {
	id := uuid.NewSHA1(eventNamespace, []byte(typ+":"+purchase.String()))
	return "evt_" + hex.EncodeToString(id[:])
}

// queuePurchaseEvents adds the batch's event statement to pb. Quotes buy
// nothing and add no lines.
func queuePurchaseEvents(pb *pgx.Batch, account uuid.UUID, jobs []*purchaseJob, threshold money.Cents, test bool) {
	var events, traces []string
	var ids []uuid.UUID
	for _, j := range jobs {
		if j.dry || len(j.newIDs) == 0 {
			continue
		}
		ev := eventID(outbox.PurchaseCompleted, j.newIDs[0])
		for _, id := range j.newIDs {
			events = append(events, ev)
			ids = append(ids, id)
			traces = append(traces, j.trace)
		}
	}
	low := ""
	if len(ids) > 0 {
		low = eventID(outbox.BalanceLow, ids[0])
	}
	pb.Queue(purchaseEventsSQL, account, events, ids, low, int64(threshold), !test, traces)
}
