package billing

import (
	"context"
	"errors"
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
	// maxBatch bounds how many purchases share one statement. A purchase
	// waits for at most the batch running and its own: a large batch
	// amortises the statements' start, the lock, the round trips and the
	// commit over more purchases.
	maxBatch = 256
	// maxInFlight batches of one account run at once on a node. One: the
	// purchases that arrive while it runs form the next, so a busy
	// account's batches grow with its load. Two in flight made the batches
	// half as large and cost about a third more CPU per purchase, for no
	// more purchases per second (docs/performance.md, "Purchases at 3x").
	// The part of a batch that needs no lock still overlaps the batches of
	// the account on other nodes.
	maxInFlight = 1
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
	cur := b.next(pk, q)
	for cur != nil {
		b.runAttempts(cur, pk.account)
		// The next batch is formed before this one's buyers are answered,
		// so that its hold reaches Redis ahead of the admissions of the
		// requests those answers set free, instead of queueing behind them.
		next := b.next(pk, q)
		cur.answer()
		b.requestStamps(cur.ctx, cur.jobs)
		cur.span.End()
		cur = next
	}
}

// batchRun is one batch on its way: its jobs, its span, and the hold on
// what its buyers own, taken while the batch before it ends.
type batchRun struct {
	jobs []*purchaseJob
	ctx  context.Context
	span trace.Span
	// hold delivers the hold once Redis has it (nil: nothing is held).
	hold <-chan admission.Hold
	// held is that hold, once the batch waited for it; unknown is whether
	// the batch's last attempt ended with its commit unconfirmed.
	held    *admission.Hold
	unknown bool
}

// next takes the account's next batch and sends its hold on its way, or,
// when nothing is pending, ends the drain's turn and returns nil.
func (b *batcher) next(pk poolKey, q *accountQueue) *batchRun {
	b.mu.Lock()
	if len(q.pending) == 0 {
		q.running--
		if q.running == 0 {
			delete(b.queues, pk)
		}
		b.mu.Unlock()
		return nil
	}
	jobs := q.take()
	b.mu.Unlock()
	return b.begin(jobs)
}

// begin starts a batch's span and its hold on what its buyers own: what
// they own changes with the commit, so nodes stop trusting their copies of
// it before (Door.Hold), all of the batch's buyers in one call. The hold
// only has to be in place before the commit, so it travels while the batch
// before this one is answered and while this one's statements run (exec).
func (b *batcher) begin(jobs []*purchaseJob) *batchRun {
	ctx, span := b.startBatch(jobs)
	r := &batchRun{jobs: jobs, ctx: ctx, span: span}
	if subjects := ownedBy(jobs); b.admission != nil && len(subjects) > 0 {
		hold := make(chan admission.Hold, 1)
		go func() { hold <- b.admission.Hold(ctx, subjects...) }()
		r.hold = hold
	}
	return r
}

// answer gives the batch's buyers their answers and ends its hold. A hold
// Redis has taken keeps every node from trusting a copy of what the
// buyers own until it ends, so a buyer's next read sees its purchase
// whether the hold ends before or after the answer: it ends on its own
// goroutine, sent before the answers so that it reaches Redis ahead of the
// admissions of the requests they set free, and nobody waits for it. A
// hold Redis did not take protects nothing, so its release (which gives
// the marks new versions) comes before the answers. A batch whose commit
// is unconfirmed leaves its hold to lapse (Hold.Settle).
func (r *batchRun) answer() {
	if r.held == nil && r.hold != nil {
		// Every attempt failed before its commit: the hold went out all
		// the same, and is ended like any other.
		h := <-r.hold
		r.held = &h
	}
	if h := r.held; h != nil {
		if h.Taken() {
			go h.Settle(r.ctx, r.unknown)
		} else {
			h.Settle(r.ctx, r.unknown)
		}
	}
	for _, j := range r.jobs {
		if j.done != nil {
			close(j.done)
		}
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

// run runs one batch on the caller's goroutine, as a quote does: it needs
// no lock, and a quote holds nothing.
func (b *batcher) run(account uuid.UUID, jobs []*purchaseJob) {
	r := b.begin(jobs)
	b.runAttempts(r, account)
	r.answer()
	r.span.End()
}

// runAttempts runs a batch, whose jobs are all live or all test, and
// leaves each job its outcome or error. A failed connection (a terminated
// backend, a failover) or an unanswered line runs the batch again: the
// account lock makes the second run see whatever the first committed, and
// the jobs' own purchase ids tell it apart from what was owned before.
// No attempt commits before the batch's hold (begin) is in place (exec).
// A batch gives up (30 s) well before a hold
// lapses; one whose last attempt ended with its outcome unknown leaves the
// hold to lapse (answer): that attempt may still commit after the batch
// gave up.
func (b *batcher) runAttempts(r *batchRun, account uuid.UUID) {
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	jobs := r.jobs
	var err error
	defer func() { r.unknown = database.CommitOutcomeUnknown(err) }()
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			time.Sleep(retryPause << (attempt - 1))
		}
		var complete bool
		complete, err = b.exec(ctx, account, r)
		if errors.Is(err, errHoldLate) && r.waitHold(ctx, 0) {
			attempt--
			continue
		}
		if errors.Is(err, errUnread) {
			continue // committed: the next attempt reads what it bought
		}
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
	if err == nil || database.IsUnavailable(err) || database.IsRetryable(err) || errors.Is(err, errHoldLate) || errors.Is(err, errUnread) {
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
// job's verdict (the columns of broll_purchase_batch, in order). Its
// nullable columns are pgtype values, which readLines fills in place,
// without reflection and without an allocation each: the batch's rows are
// read on the path every purchase of the account waits on.
type batchLine struct {
	Job                int32
	Verdict            string
	Quote              int64
	Available, Balance pgtype.Int8
	Video              pgtype.UUID
	Known              bool
	PurchaseID         pgtype.UUID
	Price              pgtype.Int8
	PurchasedAt        pgtype.Timestamptz
	Limit              pgtype.Int8
	Period             pgtype.Text
	Spent              pgtype.Int8
	ResetsAt           pgtype.Timestamptz
	LicenseID          pgtype.Text
	LicenseRevoked     pgtype.Bool
}

// readLines reads the batch's rows, each into its place in the slice.
func readLines(rows pgx.Rows) ([]batchLine, error) {
	defer rows.Close()
	var lines []batchLine
	for rows.Next() {
		lines = append(lines, batchLine{})
		l := &lines[len(lines)-1]
		if err := rows.Scan(&l.Job, &l.Verdict, &l.Quote, &l.Available, &l.Balance, &l.Video, &l.Known, &l.PurchaseID,
			&l.Price, &l.PurchasedAt, &l.Limit, &l.Period, &l.Spent, &l.ResetsAt, &l.LicenseID, &l.LicenseRevoked); err != nil {
			return nil, err
		}
	}
	return lines, rows.Err()
}

// exec runs the batch statement once, as binary arrays in and one row per
// requested video out. complete is false when a bought job has a line
// without its purchase, which a purchase of the same clip by the same
// buyer in another batch at the same time causes: the batch then runs
// again and finds it owned.
//
// With a hold (r.hold), the transaction is opened in the same pipeline and
// committed once the hold is in place (runHeld): the hold travels to Redis
// while the statements run, instead of before them, and a hold in place
// before they end sends the COMMIT behind them in the same round trip. A
// hold still missing holdPatience after the statements' end (Redis slow or
// failing over) rolls the transaction back rather than keep the account
// row locked: exec then returns errHoldLate, and the batch runs again once
// the hold is there.
func (b *batcher) exec(ctx context.Context, account uuid.UUID, r *batchRun) (complete bool, err error) {
	jobs := r.jobs
	// pgtype.UUIDs go out in binary; a uuid.UUID would be written through
	// its text form (driver.Valuer), several allocations a line. FlatArrays
	// are encoded as the arrays they are, where pgx reaches the elements of
	// other slices through reflection.
	keys := make(pgtype.FlatArray[pgtype.UUID], len(jobs))
	emails := make([]string, len(jobs))
	expected := make(pgtype.FlatArray[*int64], len(jobs))
	dry := make(pgtype.FlatArray[bool], len(jobs))
	var lineJob []int32
	var lineVideo, lineID pgtype.FlatArray[pgtype.UUID]
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
	// transaction and round trip (see purchaseEventsSQL).
	pb := &pgx.Batch{}
	test := len(jobs) > 0 && jobs[0].test
	acct := pgtype.UUID{Bytes: account, Valid: true}
	pb.Queue(purchaseBatchSQL, acct, keys, emails, expected, dry, lineJob, lineVideo, lineID, !test, int64(b.testBalance), lineLicense)
	queuePurchaseEvents(pb, acct, jobs, b.lowBalance, test)
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// A connection left in a transaction by an error below is closed by
	// the pool on its release, which ends the transaction.
	defer conn.Release()
	complete = true
	collect := func(rows pgx.Rows) error {
		lines, err := readLines(rows)
		if err != nil {
			return err
		}
		complete = takeLines(jobs, lines)
		return nil
	}
	if r.hold != nil {
		err := runHeld(ctx, conn.Conn(), pb, r, func(i int, rows pgx.Rows) error {
			if i == 0 {
				return collect(rows)
			}
			rows.Close()
			return rows.Err()
		})
		if err != nil {
			return false, err
		}
		return complete, nil
	}
	br := conn.SendBatch(ctx, pb)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return false, err
	}
	if err := collect(rows); err != nil {
		return false, err
	}
	if _, err := br.Exec(); err != nil {
		return false, err
	}
	// An error here means the batch may or may not have committed: run
	// tells which by running it again.
	return complete, br.Close()
}

// takeLines gives each job its lines' outcome, and reports whether every
// bought or owned line came with its purchase.
func takeLines(jobs []*purchaseJob, lines []batchLine) (complete bool) {
	complete = true
	for _, l := range lines {
		if l.Job < 0 || int(l.Job) >= len(jobs) {
			continue
		}
		o := &jobs[l.Job].out
		o.verdict, o.quote = verdict(l.Verdict), money.Cents(l.Quote)
		o.limit = spendLimit{limit: valid(l.Limit.Int64, l.Limit.Valid), period: valid(l.Period.String, l.Period.Valid),
			spent: valid(l.Spent.Int64, l.Spent.Valid), resetsAt: valid(l.ResetsAt.Time, l.ResetsAt.Valid)}
		if l.Available.Valid {
			o.available = money.Cents(l.Available.Int64)
		}
		if l.Balance.Valid {
			o.balance = money.Cents(l.Balance.Int64)
		}
		video := uuid.UUID(l.Video.Bytes)
		if !l.Known {
			o.unknown = append(o.unknown, video.String())
		}
		pv := PurchasedVideo{PricePaid: money.Cents(l.Price.Int64)}
		if l.PurchaseID.Valid {
			pv.PurchaseID, pv.PurchasedAt = l.PurchaseID.Bytes, l.PurchasedAt.Time
			pv.LicenseID, pv.LicenseRevoked = l.LicenseID.String, l.LicenseRevoked.Bool
		} else if o.verdict == verdictBought || o.verdict == verdictOwned {
			complete = false
		}
		o.lines[video] = pv
	}
	return complete
}

// valid is v when ok, nil otherwise.
func valid[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

// holdPatience is how long a batch's open transaction waits for its hold
// while its statements run, and again after them (runHeld): far longer
// than Redis takes to answer (about a millisecond under load), far shorter
// than the account row may stay locked.
const holdPatience = 100 * time.Millisecond

// errHoldLate is a batch that rolled back because its hold was not in
// place in time; it runs again once it is, and counts as no attempt.
var errHoldLate = errors.New("billing: the batch's hold was late")

// waitHold waits up to patience (0: until ctx ends) for the batch's hold
// to be in place and reports whether it is.
func (r *batchRun) waitHold(ctx context.Context, patience time.Duration) bool {
	if r.held != nil || r.hold == nil {
		return true
	}
	var timeout <-chan time.Time
	if patience > 0 {
		t := time.NewTimer(patience)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case h := <-r.hold:
		r.held = &h
		return true
	case <-timeout:
		return false
	case <-ctx.Done():
		return false
	}
}
