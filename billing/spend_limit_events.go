package billing

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"broll/internal/outbox"
)

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
