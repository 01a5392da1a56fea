package billing

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"broll/internal/outbox"
)

// spendLimitEventsSQL writes spend_limit.reached for the keys a batch
// refused for their spend limit: at most one per key and period (the id is
// made from both, so a second refusal in the period, or a batch run again,
// inserts nothing), and none when no enabled endpoint of the account
// subscribes to it. A test key's event says livemode false.
//
// $1 account, then per refused key: $2 event id, $3 key, $4 limit, $5 spent,
// $6 period, $7 the end of the period (NULL for 'total'), $8 the trace id of
// the refused request ("" for none).
const spendLimitEventsSQL = `
INSERT INTO webhook_events (id, account_id, type, livemode, trace_id, data)
SELECT l.event_id, $1, '` + outbox.SpendLimitReached + `', k.livemode, nullif(l.trace_id, ''), jsonb_build_object(
    'key', jsonb_build_object('id', k.id, 'kind', k.kind, 'label', k.label),
    'limit', round(l.lim / 100.0, 2), 'spent', round(l.spent / 100.0, 2),
    'period', l.period, 'period_resets_at', l.resets_at, 'currency', 'USD')
FROM unnest($2::text[], $3::uuid[], $4::bigint[], $5::bigint[], $6::text[], $7::timestamptz[], $8::text[])
     AS l(event_id, key_id, lim, spent, period, resets_at, trace_id)
JOIN api_keys k ON k.id = l.key_id AND k.account_id = $1
WHERE EXISTS (SELECT 1 FROM webhook_endpoints e
              WHERE e.account_id = $1 AND e.enabled AND '` + outbox.SpendLimitReached + `' = ANY (e.events))
ON CONFLICT (id) DO NOTHING`

// writeSpendLimitEvents records spend_limit.reached for the jobs of a
// finished batch that their key's limit refused. A refusal changes nothing
// that could roll back, so the event is written after the batch, in its own
// statement; were that statement to fail, the refusal stands and the event
// is not sent (the next refusal in the period writes it).
func (b *batcher) writeSpendLimitEvents(ctx context.Context, account uuid.UUID, jobs []*purchaseJob) error {
	var (
		ids, periods  []string
		traces        []string
		keys          []uuid.UUID
		limits, spent []int64
		resets        []pgtype.Timestamptz
	)
	for _, j := range jobs {
		l := j.out.limit
		if j.err != nil || j.out.verdict != verdictSpendLimit || j.key == uuid.Nil ||
			l.limit == nil || l.period == nil || l.spent == nil {
			continue
		}
		end := deref(l.resetsAt)
		ids = append(ids, spendLimitEventID(j.key, *l.period, end))
		keys = append(keys, j.key)
		limits, spent, periods = append(limits, *l.limit), append(spent, *l.spent), append(periods, *l.period)
		resets = append(resets, pgtype.Timestamptz{Time: end, Valid: l.resetsAt != nil})
		traces = append(traces, j.trace)
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := b.pool.Exec(ctx, spendLimitEventsSQL, account, ids, keys, limits, spent, periods, resets, traces)
	return err
}

// spendLimitEventID names a key's spend_limit.reached for one period.
func spendLimitEventID(key uuid.UUID, period string, end time.Time) string {
	id := uuid.NewSHA1(eventNamespace, []byte(outbox.SpendLimitReached+":"+key.String()+":"+period+":"+end.UTC().Format(time.RFC3339)))
	return "evt_" + hex.EncodeToString(id[:])
}
