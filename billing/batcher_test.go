package billing

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/internal/testkit"
	"broll/tenancy"
)

// batchFixture is a fresh database with an account holding 100.00, one
// customer key of it (and its root key's id) and n clips at 2.50 for sale.
func batchFixture(t *testing.T, n int) (pool *pgxpool.Pool, account, root, key uuid.UUID, videos []uuid.UUID) {
	t.Helper()
	pool, _ = testkit.NewPool(t)
	ctx := context.Background()
	opened, err := New(pool, ServiceOptions{LowBalanceThreshold: DefaultLowBalanceThreshold, TestBalance: DefaultTestBalance}).OpenAccount(ctx, "Test", "batch", 10000)
	if err != nil {
		t.Fatal(err)
	}
	owner := tenancy.Principal{KeyID: opened.RootKey.ID, AccountID: opened.Account.ID, RootKeyID: opened.RootKey.ID,
		Kind: tenancy.KindRoot, Scopes: opened.RootKey.Scopes}
	k, err := tenancy.New(pool, tenancy.ServiceOptions{}).CreateCustomerKey(ctx, owner, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	videos = make([]uuid.UUID, n)
	for i := range videos {
		videos[i] = uuid.New()
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO videos (id, title, emotion, gender, difficulty, media_key)
		SELECT id, 'clip', 'happy', 'female', 'easy', 'clips/x' FROM unnest($1::uuid[]) AS id`, videos); err != nil {
		t.Fatal(err)
	}
	return pool, opened.Account.ID, opened.RootKey.ID, k.ID, videos
}

// TestBatchRunAgainAfterLostAnswer: a batch that committed but whose answer
// was lost with its connection runs again; the second run must report the
// purchases of the first as bought and charged by this job (not as owned
// before, not charged twice), because they carry the job's own ids.
func TestBatchRunAgainAfterLostAnswer(t *testing.T) {
	t.Parallel()
	pool, account, _, key, videos := batchFixture(t, 2)
	ctx := context.Background()
	owned := newJob(key, "", videos[:1], nil, false, false)
	b := newBatcher(pool)
	if complete, err := b.exec(ctx, account, &batchRun{jobs: []*purchaseJob{owned}}); err != nil || !complete {
		t.Fatalf("first purchase: %v %v", complete, err)
	}

	job := newJob(key, "", videos, nil, false, false)
	if _, err := b.exec(ctx, account, &batchRun{jobs: []*purchaseJob{job}}); err != nil { // committed; its answer "lost"
		t.Fatal(err)
	}
	complete, err := b.exec(ctx, account, &batchRun{jobs: []*purchaseJob{job}})
	if err != nil || !complete {
		t.Fatalf("second run: %v %v", complete, err)
	}
	res, err := job.answer()
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalCharged != 500 || res.Balance != 9000 || !res.Purchases[0].AlreadyOwned || res.Purchases[1].AlreadyOwned ||
		res.Purchases[1].PurchaseID != job.newIDs[1] || res.Purchases[0].PurchaseID == uuid.Nil {
		t.Fatalf("after the second run: %+v", res)
	}
}

// TestBatchCommitsOnlyOnceItsHoldIsInPlace: a batch's statements run while
// its hold travels to Redis, and its commit waits for the hold. A hold
// that does not come within holdPatience rolls the batch back, charging
// nothing, and the batch runs again once the hold is there.
func TestBatchCommitsOnlyOnceItsHoldIsInPlace(t *testing.T) {
	t.Parallel()
	pool, account, _, key, videos := batchFixture(t, 1)
	ctx := context.Background()
	b := newBatcher(pool)
	balance := func() (cents, purchases int64) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT balance_cents, (SELECT count(*) FROM purchases WHERE account_id = $1)
			FROM accounts WHERE id = $1`, account).Scan(&cents, &purchases); err != nil {
			t.Fatal(err)
		}
		return cents, purchases
	}
	before, _ := balance()

	hold := make(chan admission.Hold, 1)
	late := &batchRun{jobs: []*purchaseJob{newJob(key, "", videos, nil, false, false)}, hold: hold}
	start := time.Now()
	if _, err := b.exec(ctx, account, late); !errors.Is(err, errHoldLate) {
		t.Fatalf("a batch whose hold never came: %v, want errHoldLate", err)
	}
	if waited := time.Since(start); waited < holdPatience {
		t.Fatalf("gave up on the hold after %v, before holdPatience", waited)
	}
	if cents, n := balance(); cents != before || n != 0 {
		t.Fatalf("after a late hold: balance %d (before %d), %d purchases; want nothing charged", cents, before, n)
	}

	hold <- admission.Hold{}
	if complete, err := b.exec(ctx, account, late); err != nil || !complete {
		t.Fatalf("once the hold is in place: %v %v", complete, err)
	}
	if cents, n := balance(); cents != before-500 || n != 1 {
		t.Fatalf("after the hold: balance %d (before %d), %d purchases; want one charged", cents, before, n)
	}
}

// TestHeldBatchCommitsBehindItsStatements: a batch whose hold arrives while
// its statements run sends its COMMIT behind them (runHeld); one whose hold
// comes only after holdPatience waits for it again once the statements are
// done, and commits then. A batch whose statement or commit fails charges
// nothing, and its connection never serves another batch in that state:
// the next batch on the same pool commits.
func TestHeldBatchCommitsBehindItsStatements(t *testing.T) {
	t.Parallel()
	pool, account, _, key, videos := batchFixture(t, 5)
	ctx := context.Background()
	// One connection: every batch below runs on the one the batch before used.
	cfg := pool.Config()
	cfg.MaxConns = 1
	one, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	b := newBatcher(one)
	state := func() (cents, purchases, ledger int64) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT balance_cents, (SELECT count(*) FROM purchases WHERE account_id = $1),
			(SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE account_id = $1)
			FROM accounts WHERE id = $1`, account).Scan(&cents, &purchases, &ledger); err != nil {
			t.Fatal(err)
		}
		return cents, purchases, ledger
	}
	held := func(after time.Duration, videos ...uuid.UUID) (*batchRun, *purchaseJob) {
		hold := make(chan admission.Hold, 1)
		time.AfterFunc(after, func() { hold <- admission.Hold{} })
		j := newJob(key, "", videos, nil, false, false)
		return &batchRun{jobs: []*purchaseJob{j}, hold: hold}, j
	}
	want := func(what string, cents, purchases int64) {
		t.Helper()
		c, n, l := state()
		if c != cents || n != purchases || l != cents {
			t.Fatalf("%s: balance %d, %d purchases, ledger %d; want %d, %d, %d", what, c, n, l, cents, purchases, cents)
		}
	}
	want("before", 10000, 0)

	r, j := held(0, videos[0])
	if complete, err := b.exec(ctx, account, r); err != nil || !complete || j.out.verdict != verdictBought {
		t.Fatalf("hold at once: %v %v %q", complete, err, j.out.verdict)
	}
	want("after a hold in place at once", 9500, 1)

	r, j = held(holdPatience+holdPatience/2, videos[1])
	start := time.Now()
	if complete, err := b.exec(ctx, account, r); err != nil || !complete || j.out.verdict != verdictBought {
		t.Fatalf("hold after holdPatience: %v %v %q", complete, err, j.out.verdict)
	}
	if waited := time.Since(start); waited < holdPatience {
		t.Fatalf("committed after %v, before its hold came", waited)
	}
	want("after a hold that came after holdPatience", 9000, 2)

	// The statement fails: a licence id its CHECK refuses.
	r, j = held(0, videos[2])
	j.newLicenses[0] = "lic_not_hex"
	if _, err := b.exec(ctx, account, r); err == nil {
		t.Fatal("a batch whose statement failed reported no error")
	}
	want("after a failed statement", 9000, 2)

	// The commit fails.
	remove := testkit.CommitTrap(t, pool, "ledger", testkit.CommitFails)
	r, _ = held(0, videos[3])
	if _, err := b.exec(ctx, account, r); err == nil {
		t.Fatal("a batch whose commit failed reported no error")
	}
	remove()
	want("after a failed commit", 9000, 2)

	r, j = held(0, videos[3], videos[4])
	if complete, err := b.exec(ctx, account, r); err != nil || !complete || j.out.verdict != verdictBought {
		t.Fatalf("the batch after the failures: %v %v %q", complete, err, j.out.verdict)
	}
	want("after the batch after the failures", 8000, 4)
}

// TestHeldBatchThatCannotReadItsAnswer: a held batch sends its COMMIT
// before it reads its rows, so a failure to read them (not the server's)
// says whether the commit went through: errUnread when it did (the batch
// runs again and finds what it bought by its ids), the read's own error
// when the hold never came and nothing was committed.
func TestHeldBatchThatCannotReadItsAnswer(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE unread (n int)`); err != nil {
		t.Fatal(err)
	}
	undecodable := errors.New("undecodable")
	run := func(n int, hold chan admission.Hold) error {
		t.Helper()
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		pb := &pgx.Batch{}
		pb.Queue(`INSERT INTO unread VALUES ($1) RETURNING n`, n)
		return runHeld(ctx, conn.Conn(), pb, &batchRun{hold: hold}, func(int, pgx.Rows) error { return undecodable })
	}
	count := func(n int) (c int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM unread WHERE n = $1`, n).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	held := make(chan admission.Hold, 1)
	held <- admission.Hold{}
	if err := run(1, held); !errors.Is(err, errUnread) || !errors.Is(err, undecodable) {
		t.Fatalf("a committed batch whose rows could not be read: %v, want errUnread", err)
	}
	if count(1) != 1 {
		t.Fatal("the batch whose rows could not be read did not commit, though its COMMIT went out")
	}
	if err := run(2, make(chan admission.Hold)); !errors.Is(err, undecodable) || errors.Is(err, errUnread) {
		t.Fatalf("a batch whose hold never came and whose rows could not be read: %v, want the read's error", err)
	}
	if count(2) != 0 {
		t.Fatal("a batch whose hold never came committed")
	}
}

// batchTrace records what a pool's tracer is told of batches.
type batchTrace struct {
	mu      sync.Mutex
	started int
	queries []string
	ended   int
}

func (b *batchTrace) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (b *batchTrace) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (b *batchTrace) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.started++
	return ctx
}
func (b *batchTrace) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queries = append(b.queries, d.SQL)
}
func (b *batchTrace) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended++
}

// TestHeldBatchIsTracedAsABatch: the statements of a held batch, which go
// through pgconn's pipeline rather than pgx.Batch, reach the pool's tracer
// as one batch of both statements, as a batch sent by pgx does.
func TestHeldBatchIsTracedAsABatch(t *testing.T) {
	t.Parallel()
	pool, account, _, key, videos := batchFixture(t, 1)
	ctx := context.Background()
	tr := &batchTrace{}
	cfg := pool.Config()
	cfg.ConnConfig.Tracer = tr
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer traced.Close()
	hold := make(chan admission.Hold, 1)
	hold <- admission.Hold{}
	r := &batchRun{jobs: []*purchaseJob{newJob(key, "", videos, nil, false, false)}, hold: hold}
	if complete, err := newBatcher(traced).exec(ctx, account, r); err != nil || !complete {
		t.Fatalf("held batch: %v %v", complete, err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.started != 1 || tr.ended != 1 || !slices.Equal(tr.queries, []string{purchaseBatchSQL, purchaseEventsSQL}) {
		t.Fatalf("traced %d batch starts, %d ends, statements %q; want one batch of the purchase and events statements",
			tr.started, tr.ended, tr.queries)
	}
}

// TestUnconfirmedBatchLeavesWhatItsBuyersOwnHeld: a batch that committed
// releases its hold on what its buyers own at once. One whose every
// attempt ended without an answer ("could not be confirmed") leaves the
// hold to lapse: its last attempt may still commit, and a release before
// that would let nodes copy what the buyer owned before it under the new
// token, and show the clip unowned until the buyer's next purchase.
func TestUnconfirmedBatchLeavesWhatItsBuyersOwnHeld(t *testing.T) {
	t.Parallel()
	pool, account, root, key, videos := batchFixture(t, 2)
	b, trusted := holdFixture(t, pool, root, key)

	bought := newJob(key, "", videos[:1], nil, false, false)
	b.run(account, []*purchaseJob{bought})
	if bought.err != nil || !releasedSoon(trusted) {
		t.Fatalf("a committed batch: error %v, what the buyer owns released after it %v", bought.err, trusted())
	}

	testkit.CommitTrap(t, pool, "purchases", testkit.CommitEndsSession)
	lost := newJob(key, "", videos[1:], nil, false, false)
	b.run(account, []*purchaseJob{lost})
	if apperr.CodeOf(lost.err) != apperr.Unavailable {
		t.Fatalf("a batch whose every attempt lost its session: %v, want unavailable", lost.err)
	}
	if trusted() {
		t.Error("what the buyer owns was released after a batch that could not be confirmed")
	}
}

// TestRefusedBatchReleasesItsHold: a batch whose statements fail before
// its commit (here every insert of a purchase is refused) still ends the
// hold it sent for what its buyers own: nothing changed, so nodes may
// trust their copies again at once, rather than after the hold lapses.
func TestRefusedBatchReleasesItsHold(t *testing.T) {
	t.Parallel()
	pool, account, root, key, videos := batchFixture(t, 1)
	b, trusted := holdFixture(t, pool, root, key)
	if _, err := pool.Exec(context.Background(), `
		CREATE FUNCTION refuse_purchases() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON purchases FOR EACH ROW EXECUTE FUNCTION refuse_purchases()`); err != nil {
		t.Fatal(err)
	}
	job := newJob(key, "", videos, nil, false, false)
	b.run(account, []*purchaseJob{job})
	if job.err == nil {
		t.Fatal("a batch whose inserts are refused succeeded")
	}
	if !releasedSoon(trusted) {
		t.Fatal("what the buyer owns is still held after a batch that changed nothing")
	}
}

// holdFixture is a batcher that holds what its buyers own through an
// admission gate on the test's Redis, and trusted, which asks another
// node's admission whether it may trust its copy of what key owns (false
// while the mark is held).
func holdFixture(t *testing.T, pool *pgxpool.Pool, root, key uuid.UUID) (*batcher, func() bool) {
	t.Helper()
	ks := testkit.Redis(t)
	gate := admission.NewGate(ks.Client, ks.Prefix, nil, admission.GateOptions{})
	t.Cleanup(func() { gate.Close() })
	b := newBatcher(pool)
	b.admission = gate
	other := admission.NewGate(ks.Client, ks.Prefix, tenancy.NewUsage(pool, ks.Client, ks.Prefix), admission.GateOptions{PerMinute: 1000})
	t.Cleanup(func() { other.Close() })
	return b, func() bool {
		t.Helper()
		d, err := other.Admit(context.Background(), admission.Caller{KeyID: key, RootKeyID: root})
		if err != nil || !d.Allowed {
			t.Fatalf("admission: %+v %v", d, err)
		}
		_, ok := d.Pass.Version(admission.Owned(key))
		return ok
	}
}

// releasedSoon reports whether trusted comes true within a few seconds: a
// taken hold is released on its own goroutine after the buyers' answers.
func releasedSoon(trusted func() bool) bool {
	deadline := time.Now().Add(5 * time.Second)
	for !trusted() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
