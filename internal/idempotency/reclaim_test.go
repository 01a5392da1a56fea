package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/idempotency"
	"broll/internal/testkit"
)

// TestOwnerGoneIsReclaimed: a request whose Idempotency-Key claim is held
// by a live owner is not run twice; once the owner's connections die (its
// node crashed, or the primary it was talking to went away in a failover)
// the very next retry runs it, long before the claim would go stale, and
// what the dead owner tries to settle afterwards does not touch the new
// owner's claim.
func TestOwnerGoneIsReclaimed(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewPool(t)
	ctx := context.Background()
	// The owner's node has pools of its own, told apart by application name.
	owner, err := database.Open(ctx, url+"&application_name=idem_owner")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	other, err := database.Open(ctx, url+"&application_name=idem_other")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	acct := billingtest.NewAccount(t, other, billingtest.AccountOpts{})
	key := acct.Root.KeyID
	hash := idempotency.Hash("POST", "/x", []byte("a"))
	// stale is far off: reclaiming must not wait for it.
	sl := testSealer(t)
	mine := idempotency.New(owner, sl, idempotency.StoreOptions{Stale: time.Hour})
	theirs := idempotency.New(other, sl, idempotency.StoreOptions{Wait: 2 * time.Second, Stale: time.Hour})

	first, _, err := mine.Begin(ctx, key, "k", hash)
	if err != nil || first == nil {
		t.Fatalf("first claim: %v", err)
	}
	// While the owner lives, a retry waits and is told the key is in use.
	if _, _, err := theirs.Begin(ctx, key, "k", hash); !isInUse(err) {
		t.Fatalf("a live owner's key was handed out: %v", err)
	}

	// Every backend of the owner's node dies.
	var killed int
	if err := other.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
		FROM pg_stat_activity WHERE application_name = 'idem_owner' AND datname = current_database()`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("no backend of the owner to terminate")
	}

	second, stored, err := theirs.Begin(ctx, key, "k", hash)
	if err != nil || second == nil {
		t.Fatalf("the retry after the owner died did not get the key: claim %v stored %+v err %v", second, stored, err)
	}
	// The dead owner's settling comes late: it must not release or answer
	// for the request now running elsewhere.
	_ = first.Release(ctx)
	_ = first.Finish(ctx, idempotency.Response{Status: 500, Body: []byte(`{"stale":true}`)})
	if _, _, err := mine.Begin(ctx, key, "k", hash); !isInUse(err) {
		t.Fatalf("the new owner's claim was lost to the old one's settling: %v", err)
	}
	if err := second.Finish(ctx, idempotency.Response{Status: 200, ContentType: "application/json", Body: []byte(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	_, replay, err := mine.Begin(ctx, key, "k", hash)
	if err != nil || replay == nil || replay.Status != 200 || string(replay.Body) != `{"ok":true}` {
		t.Fatalf("replay after the reclaimed request finished: %+v %v", replay, err)
	}
}

func isInUse(err error) bool {
	var ae *apperr.Error
	return errors.As(err, &ae) && ae.Code == apperr.IdempotencyKeyInUse
}
