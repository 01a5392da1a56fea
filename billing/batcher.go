package billing

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/money"
)

const (
	// maxBatch bounds how many purchases share one transaction.
	maxBatch = 32
	// maxInFlight batches of one account run at once on a node: they do their
	// inserts in parallel and meet only at the final charge of the pool.
	maxInFlight = 4
)

// batcher groups concurrent purchases of the same account into one
// transaction. It never waits to fill a batch: while one batch of an account
// runs, the purchases arriving meanwhile queue up and form the next one, so
// an idle account pays no latency and a busy one amortises its row lock.
type batcher struct {
	pool *pgxpool.Pool

	mu     sync.Mutex
	queues map[uuid.UUID]*accountQueue
}

type accountQueue struct {
	pending []*purchaseJob
	running int
}

type purchaseJob struct {
	Key      uuid.UUID   `json:"key"`
	IDs      []uuid.UUID `json:"ids"`
	Expected *int64      `json:"expected"`

	rows []batchRow
	err  error
	done chan struct{}
}

// batchRow is one output row of broll_purchase for a job.
type batchRow struct {
	balance *int64
	pv      *PurchasedVideo
}

func newBatcher(pool *pgxpool.Pool) *batcher {
	return &batcher{pool: pool, queues: map[uuid.UUID]*accountQueue{}}
}

// do runs one purchase through the account's batches and waits for it. The
// purchase outlives a cancelled request on purpose: once queued it is either
// committed with its batch or not at all.
func (b *batcher) do(account uuid.UUID, job *purchaseJob) {
	job.done = make(chan struct{})
	b.mu.Lock()
	q := b.queues[account]
	if q == nil {
		q = &accountQueue{}
		b.queues[account] = q
	}
	q.pending = append(q.pending, job)
	start := q.running < maxInFlight
	if start {
		q.running++
	}
	b.mu.Unlock()
	if start {
		go b.drain(account, q)
	}
	<-job.done
}

func (b *batcher) drain(account uuid.UUID, q *accountQueue) {
	for {
		b.mu.Lock()
		if len(q.pending) == 0 {
			q.running--
			if q.running == 0 {
				delete(b.queues, account)
			}
			b.mu.Unlock()
			return
		}
		n := min(len(q.pending), maxBatch)
		jobs := q.pending[:n:n]
		q.pending = q.pending[n:]
		b.mu.Unlock()
		b.run(account, jobs)
		for _, j := range jobs {
			close(j.done)
		}
	}
}

func (b *batcher) run(account uuid.UUID, jobs []*purchaseJob) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := b.runBatch(ctx, account, jobs)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "BR503" {
		// Another batch spent the pool meanwhile: buy one by one, each
		// charging under the row lock, so that every purchase gets its own
		// exact answer.
		for _, j := range jobs {
			j.err = b.runOne(ctx, account, j)
		}
		return
	}
	if err != nil {
		setErr(jobs, err)
	}
}

const purchaseOneSQL = `SELECT * FROM broll_purchase($1, $2, $3, $4, true)`

func (b *batcher) runOne(ctx context.Context, account uuid.UUID, j *purchaseJob) error {
	j.rows = nil
	rows, err := b.pool.Query(ctx, purchaseOneSQL, account, j.Key, j.IDs, j.Expected)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r batchRow
		var quote *int64
		var id, videoID *uuid.UUID
		var price *int64
		var at *time.Time
		var owned *bool
		if err := rows.Scan(&quote, &r.balance, &id, &videoID, &price, &at, &owned); err != nil {
			return err
		}
		r.pv = purchased(id, videoID, price, at, owned)
		j.rows = append(j.rows, r)
	}
	return rows.Err()
}

func purchased(id, videoID *uuid.UUID, price *int64, at *time.Time, owned *bool) *PurchasedVideo {
	if id == nil {
		return nil
	}
	return &PurchasedVideo{PurchaseID: *id, VideoID: *videoID, PricePaid: money.Cents(*price), PurchasedAt: *at, AlreadyOwned: *owned}
}

func (b *batcher) runBatch(ctx context.Context, account uuid.UUID, jobs []*purchaseJob) error {
	payload, err := json.Marshal(jobs)
	if err != nil {
		return err
	}
	rows, err := b.pool.Query(ctx, purchaseBatchSQL, account, payload)
	if err != nil {
		return err
	}
	defer rows.Close()
	for _, j := range jobs {
		j.err, j.rows = nil, nil
	}
	var balance *int64
	for rows.Next() {
		var job int
		var state, detail, constraint *string
		var r batchRow
		var id, videoID *uuid.UUID
		var price *int64
		var at *time.Time
		var owned *bool
		var quote *int64
		if err := rows.Scan(&job, &state, &detail, &constraint, &quote, &r.balance, &id, &videoID, &price, &at, &owned); err != nil {
			return err
		}
		if job == -1 {
			balance = r.balance
			continue
		}
		if job < 0 || job >= len(jobs) {
			continue
		}
		j := jobs[job]
		if state != nil {
			j.err = &pgconn.PgError{Code: *state, Detail: deref(detail), ConstraintName: deref(constraint)}
			continue
		}
		r.pv = purchased(id, videoID, price, at, owned)
		j.rows = append(j.rows, r)
	}
	// An error here (the commit included) means nothing of the batch
	// happened: every job reports it.
	if err := rows.Err(); err != nil {
		return err
	}
	for _, j := range jobs {
		if j.err == nil {
			j.rows = append(j.rows, batchRow{balance: balance})
		}
	}
	return nil
}

func setErr(jobs []*purchaseJob, err error) {
	for _, j := range jobs {
		j.err, j.rows = err, nil
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
