package billing

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/internal/testkit"
	"broll/tenancy"
)

// TestBatchRunAgainAfterLostAnswer: a batch that committed but whose answer
// was lost with its connection runs again; the second run must report the
// purchases of the first as bought and charged by this job (not as owned
// before, not charged twice), because they carry the job's own ids.
func TestBatchRunAgainAfterLostAnswer(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	opened, err := New(pool, ServiceOptions{LowBalanceThreshold: DefaultLowBalanceThreshold, TestBalance: DefaultTestBalance}).OpenAccount(ctx, "Test", "lost-answer", 10000)
	if err != nil {
		t.Fatal(err)
	}
	acct := opened.Account
	root := tenancy.Principal{KeyID: opened.RootKey.ID, AccountID: acct.ID, RootKeyID: opened.RootKey.ID,
		Kind: tenancy.KindRoot, Scopes: opened.RootKey.Scopes}
	key, err := tenancy.New(pool, tenancy.ServiceOptions{}).CreateCustomerKey(ctx, root, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	videos := []uuid.UUID{uuid.New(), uuid.New()}
	if _, err := pool.Exec(ctx, `
		INSERT INTO videos (id, title, emotion, gender, difficulty, media_key)
		SELECT id, 'clip', 'happy', 'female', 'easy', 'clips/x' FROM unnest($1::uuid[]) AS id`, videos); err != nil {
		t.Fatal(err)
	}
	owned := newJob(key.ID, "", videos[:1], nil, false, false)
	b := newBatcher(pool)
	if complete, err := b.exec(ctx, acct.ID, []*purchaseJob{owned}); err != nil || !complete {
		t.Fatalf("first purchase: %v %v", complete, err)
	}

	job := newJob(key.ID, "", videos, nil, false, false)
	if _, err := b.exec(ctx, acct.ID, []*purchaseJob{job}); err != nil { // committed; its answer "lost"
		t.Fatal(err)
	}
	complete, err := b.exec(ctx, acct.ID, []*purchaseJob{job})
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
