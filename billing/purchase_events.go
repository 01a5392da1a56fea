package billing

import (
	"encoding/hex"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"broll/internal/money"
	"broll/internal/outbox"
)

// DefaultLowBalanceThreshold is the balance below which an account without
// a threshold of its own gets balance.low.
const DefaultLowBalanceThreshold = money.Cents(1000)

// DefaultTestBalance is what an account's test balance starts with unless
// the service is told otherwise (BROLL_TEST_BALANCE).
const DefaultTestBalance = money.Cents(100000)

// eventNamespace makes event ids from purchase ids (uuid v5), so that every
// run of a batch names its events alike.
var eventNamespace = uuid.MustParse("5f0b8a3e-8f3c-4d1e-9a55-2f4c1d7b9e60")

func eventID(typ string, purchase uuid.UUID) string {
	id := uuid.NewSHA1(eventNamespace, []byte(typ+":"+purchase.String()))
	return "evt_" + hex.EncodeToString(id[:])
}

// queuePurchaseEvents adds the batch's event statement to pb. Quotes buy
// nothing and add no lines.
func queuePurchaseEvents(pb *pgx.Batch, account pgtype.UUID, jobs []*purchaseJob, threshold money.Cents, test bool) {
	var events, traces []string
	var ids pgtype.FlatArray[pgtype.UUID] // in binary, as the batch statement's ids
	for _, j := range jobs {
		if j.dry || len(j.newIDs) == 0 {
			continue
		}
		ev := eventID(outbox.PurchaseCompleted, j.newIDs[0])
		for _, id := range j.newIDs {
			events = append(events, ev)
			ids = append(ids, pgtype.UUID{Bytes: id, Valid: true})
			traces = append(traces, j.trace)
		}
	}
	low := ""
	if len(ids) > 0 {
		low = eventID(outbox.BalanceLow, ids[0].Bytes)
	}
	pb.Queue(purchaseEventsSQL, account, events, ids, low, int64(threshold), !test, traces)
}
