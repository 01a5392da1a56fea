package billing

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"broll/billing/license"
	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
)

const (
	// maxBatch bounds how many purchases share one statement. Batches of an
	// account queue on its row lock one after another, so a purchase waits
	// for at most the batch running and its own: a large batch amortises
	// the lock, the round trip and the commit over more purchases.
	maxBatch = 256
	// maxInFlight batches of one account run at once on a node: while one
	// holds the account row, the next is already on its way to wait for it.
	maxInFlight = 2
	// attempts of a batch whose connection failed or that met a conflict
	// it could not answer; every attempt is safe (see purchaseJob.newIDs).
	attempts = 4
	// retryPause is the pause before the second attempt, doubled before
	// each further one: long enough for a pool to replace a dead connection.
	retryPause = 50 * time.Millisecond
)

// batcher groups concurrent purchases of the same account and mode into
// one statement: live and test purchases charge different rows, so they
// queue apart. It never waits to fill a batch: while one batch of an account
// runs, the purchases arriving meanwhile queue up and form the next one, so
// an idle account pays no latency and a busy one amortises its row lock.
type batcher struct {
	pool *pgxpool.Pool
	// lowBalance is the balance.low threshold of accounts without their own.
	lowBalance money.Cents
	// testBalance is what an account's test balance starts with.
	testBalance money.Cents

	// stamps is asked for the stamped copies of what each batch bought
	// (nil: nothing is asked).
	stamps *license.Stamper
	// admission is held around each purchase batch, for what its buyers
	// own (nil: nothing is held).
	admission admission.Door

	// tracer starts the batches' spans when tracing is on (batch_trace.go).
	tracer  trace.Tracer
	tracing bool

	mu     sync.Mutex
	queues map[poolKey]*accountQueue
}

// poolKey names the balance a batch charges: the account's live pool or
// its test balance.
type poolKey struct {
	account uuid.UUID
	test    bool
}

type accountQueue struct {
	pending []*purchaseJob
	running int
}

// purchaseJob is one purchase (or quote) of a key or a legacy buyer.
type purchaseJob struct {
	key      uuid.UUID // uuid.Nil: a legacy (v0) buyer, named by email
	email    string    // the legacy customer email, "" for none and for keys
	ids      []uuid.UUID
	expected *int64
	dry      bool
	test     bool   // a test key's: paid from the test balance
	trace    string // the W3C traceparent of the request, "" for none (outbox.Trace)
	// span is the request's span, which its batch's span links to.
	span trace.SpanContext
	// newIDs are the ids the job's purchases get if bought, one per video,
	// chosen once: after a lost connection the batch runs again, and the
	// purchases it finds under these ids are this job's, already charged.
	newIDs []uuid.UUID
	// newLicenses are the licence ids of those purchases, chosen with them.
	newLicenses []string
	// retryKey is the request's Idempotency-Key when newIDs derive from it
	// (RetryPurchaseID): such an id counts as this job's only within
	// RetryWindow of its purchase.
	retryKey string

	out  outcome
	err  error
	done chan struct{}
}

func newJob(key uuid.UUID, email string, ids []uuid.UUID, expected *money.Cents, dry, test bool) *purchaseJob {
	j := &purchaseJob{key: key, email: email, ids: ids, dry: dry, test: test,
		newIDs: make([]uuid.UUID, len(ids)), newLicenses: make([]string, len(ids))}
	if expected != nil {
		e := int64(*expected)
		j.expected = &e
	}
	for i := range j.newIDs {
		j.newIDs[i], j.newLicenses[i] = uuid.New(), license.NewID()
	}
	return j
}

// buyer names whose purchases the job's ids are compared with: two jobs of
// one buyer never share a batch, so the statement meets each (buyer, video)
// once.
func (j *purchaseJob) buyer() string {
	if j.key != uuid.Nil {
		return j.key.String()
	}
	return "v0:" + j.email
}

func newBatcher(pool *pgxpool.Pool) *batcher {
	return &batcher{pool: pool, lowBalance: DefaultLowBalanceThreshold, testBalance: DefaultTestBalance,
		queues: map[poolKey]*accountQueue{}}
}

// do runs one purchase through the account's batches and waits for it. The
// purchase outlives a cancelled request on purpose: once queued it is either
// committed with its batch or not at all.
func (b *batcher) do(account uuid.UUID, job *purchaseJob) {
	job.done = make(chan struct{})
	pk := poolKey{account: account, test: job.test}
	b.mu.Lock()
	q := b.queues[pk]
	if q == nil {
		q = &accountQueue{}
		b.queues[pk] = q
	}
	q.pending = append(q.pending, job)
	start := q.running < maxInFlight
	if start {
		q.running++
	}
	b.mu.Unlock()
	if start {
		go b.drain(pk, q)
	}
	<-job.done
}

func (b *batcher) drain(pk poolKey, q *accountQueue) {
	for {
		b.mu.Lock()
		if len(q.pending) == 0 {
			q.running--
			if q.running == 0 {
				delete(b.queues, pk)
			}
			b.mu.Unlock()
			return
		}
		jobs := q.take()
		b.mu.Unlock()
		ctx := b.run(pk.account, jobs)
		for _, j := range jobs {
			close(j.done)
		}
		b.requestStamps(ctx, jobs)
	}
}

// requestStamps asks, once the batch committed and its buyers have their
// answers, for the stamped copies of the live purchases it made. The
// stamper gathers the requests of many batches and sends them later
// (license.Stamper.RequestBatch), so this costs the purchase path a slice
// append; a request lost on the way is made again by the first download
// that finds no copy.
func (b *batcher) requestStamps(ctx context.Context, jobs []*purchaseJob) {
	if b.stamps == nil {
		return
	}
	if ids := boughtLive(jobs); len(ids) > 0 {
		b.stamps.RequestBatch(ctx, ids)
	}
}

// boughtLive are the purchases the jobs made now (not those owned before)
// with live keys.
func boughtLive(jobs []*purchaseJob) []uuid.UUID {
	var ids []uuid.UUID
	for _, j := range jobs {
		if j.dry || j.test || j.err != nil {
			continue
		}
		for _, pv := range j.out.lines {
			if pv.PurchaseID != uuid.Nil && slices.Contains(j.newIDs, pv.PurchaseID) {
				ids = append(ids, pv.PurchaseID)
			}
		}
	}
	return ids
}

// take removes the next batch from the queue, in arrival order: up to
// maxBatch jobs of distinct buyers; a buyer's second job waits for the next.
func (q *accountQueue) take() []*purchaseJob {
	seen := map[string]bool{}
	var jobs, rest []*purchaseJob
	for _, j := range q.pending {
		if len(jobs) < maxBatch && !seen[j.buyer()] {
			seen[j.buyer()] = true
			jobs = append(jobs, j)
		} else {
			rest = append(rest, j)
		}
	}
	q.pending = rest
	return jobs
}

// run executes a batch, whose jobs are all live or all test, within its
// span, leaves each job its outcome or error, and returns the context of
// the batch's span (what the batch asks for afterwards continues it).
func (b *batcher) run(account uuid.UUID, jobs []*purchaseJob) context.Context {
	ctx, span := b.startBatch(jobs)
	defer span.End()
	b.runAttempts(ctx, account, jobs)
	return ctx
}

// runAttempts runs a batch and leaves each job its outcome or error. A failed
// connection (a terminated backend, a failover) or an unanswered line runs
// the batch again: the account lock makes the second run see whatever the
// first committed, and the jobs' own purchase ids tell it apart from what
// was owned before.
func (b *batcher) runAttempts(parent context.Context, account uuid.UUID, jobs []*purchaseJob) {
	ctx, cancel := context.WithTimeout(parent, 30*time.Second)
	defer cancel()
	// What the buyers own changes with the commit: nodes stop trusting
	// their copies of it before and copy it again after (Door.Hold), all
	// of the batch's buyers in one call each way, and before any buyer has
	// its answer, so a request's next read sees its own purchase. A batch
	// gives up (30 s) well before a hold lapses. A batch whose last attempt
	// ended with its outcome unknown leaves the hold to lapse instead: that
	// attempt may still commit after the batch gave up (Hold.Settle).
	var err error
	if subjects := ownedBy(jobs); b.admission != nil && len(subjects) > 0 {
		h := b.admission.Hold(ctx, subjects...)
		defer func() { h.Settle(ctx, database.CommitOutcomeUnknown(err)) }()
	}
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			time.Sleep(retryPause << (attempt - 1))
		}
		var complete bool
		complete, err = b.exec(ctx, account, jobs)
		if err == nil && complete {
			// Best effort by design: see writeSpendLimitEvents.
			_ = b.writeSpendLimitEvents(ctx, account, jobs)
			return
		}
		if err != nil && !database.IsUnavailable(err) && !database.IsRetryable(err) {
			break
		}
	}
	failed := err
	if err == nil || database.IsUnavailable(err) || database.IsRetryable(err) {
		// Whether the last attempt committed is unknown; a retry of the
		// same request is answered from what is stored, never charged twice.
		failed = apperr.New(apperr.Unavailable, "the purchase could not be confirmed; retry shortly")
	}
	for _, j := range jobs {
		j.err = failed
	}
}

// ownedBy is what the buyers of jobs own, for the jobs that can change it
// (a quote cannot; a legacy buyer has no key).
func ownedBy(jobs []*purchaseJob) []admission.Subject {
	var subjects []admission.Subject
	for _, j := range jobs {
		if !j.dry && j.key != uuid.Nil {
			subjects = append(subjects, admission.Owned(j.key))
		}
	}
	return subjects
}

// batchLine is one row of purchaseBatchSQL: a requested video with its
// job's verdict (the columns of broll_purchase_batch, in order).
type batchLine struct {
	Job                int32
	Verdict            string
	Quote              int64
	Available, Balance *int64
	Video              uuid.UUID
	Known              bool
	PurchaseID         *uuid.UUID
	Price              *int64
	PurchasedAt        *time.Time
	Limit              *int64
	Period             *string
	Spent              *int64
	ResetsAt           *time.Time
	LicenseID          *string
	LicenseRevoked     *bool
}

// exec runs the batch statement once, as binary arrays in and one row per
// requested video out. complete is false when a bought job has a line
// without its purchase, which only a concurrent writer outside the account
// lock could cause: the batch then runs again and finds it owned.
func (b *batcher) exec(ctx context.Context, account uuid.UUID, jobs []*purchaseJob) (complete bool, err error) {
	keys := make([]pgtype.UUID, len(jobs))
	emails := make([]string, len(jobs))
	expected := make([]*int64, len(jobs))
	dry := make([]bool, len(jobs))
	var lineJob []int32
	// pgtype.UUIDs go out in binary; a uuid.UUID would be written through
	// its text form (driver.Valuer), several allocations a line.
	var lineVideo, lineID []pgtype.UUID
	var lineLicense []string
	for i, j := range jobs {
		keys[i] = pgtype.UUID{Bytes: j.key, Valid: j.key != uuid.Nil}
		emails[i], expected[i], dry[i] = j.email, j.expected, j.dry
		for n, id := range j.ids {
			lineJob = append(lineJob, int32(i))
			lineVideo = append(lineVideo, pgtype.UUID{Bytes: id, Valid: true})
			lineID = append(lineID, pgtype.UUID{Bytes: j.newIDs[n], Valid: true})
			lineLicense = append(lineLicense, j.newLicenses[n])
		}
		j.out, j.err = outcome{lines: make(map[uuid.UUID]PurchasedVideo, len(j.ids))}, nil
	}
	// The outbox statement follows in the same pipeline, hence the same
	// implicit transaction and round trip (see purchaseEventsSQL).
	pb := &pgx.Batch{}
	test := len(jobs) > 0 && jobs[0].test
	pb.Queue(purchaseBatchSQL, account, keys, emails, expected, dry, lineJob, lineVideo, lineID, !test, int64(b.testBalance), lineLicense)
	queuePurchaseEvents(pb, account, jobs, b.lowBalance, test)
	br := b.pool.SendBatch(ctx, pb)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return false, err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowToStructByPos[batchLine])
	if err != nil {
		return false, err
	}
	complete = true
	for _, l := range lines {
		if l.Job < 0 || int(l.Job) >= len(jobs) {
			continue
		}
		o := &jobs[l.Job].out
		o.verdict, o.quote = verdict(l.Verdict), money.Cents(l.Quote)
		o.limit = spendLimit{limit: l.Limit, period: l.Period, spent: l.Spent, resetsAt: l.ResetsAt}
		if l.Available != nil {
			o.available = money.Cents(*l.Available)
		}
		if l.Balance != nil {
			o.balance = money.Cents(*l.Balance)
		}
		if !l.Known {
			o.unknown = append(o.unknown, l.Video.String())
		}
		pv := PurchasedVideo{PricePaid: money.Cents(deref(l.Price))}
		if l.PurchaseID != nil {
			pv.PurchaseID, pv.PurchasedAt = *l.PurchaseID, *l.PurchasedAt
			pv.LicenseID, pv.LicenseRevoked = deref(l.LicenseID), deref(l.LicenseRevoked)
		} else if o.verdict == verdictBought || o.verdict == verdictOwned {
			complete = false
		}
		o.lines[l.Video] = pv
	}
	if _, err := br.Exec(); err != nil {
		return false, err
	}
	// An error here (the commit included) means the batch may or may not
	// have committed: run tells which by running it again.
	return complete, br.Close()
}
