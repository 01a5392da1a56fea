package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/admission"
	"broll/internal/testkit"
	"broll/tenancy"
)

// TestUnconfirmedCommitLeavesTheCatalogHeld: a change whose commit
// succeeded, or which the server refused, releases its hold on the
// catalog at once. One whose client gave up while the server committed
// (the commit lands a moment later) leaves it held: released then, nodes
// could copy the clip as it was before the late commit under the new
// token and trust that copy until the next change.
func TestUnconfirmedCommitLeavesTheCatalogHeld(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ks := testkit.Redis(t)
	gate := admission.NewGate(ks.Client, ks.Prefix, nil, admission.GateOptions{})
	defer gate.Close()
	svc := NewService(ServiceOptions{Pool: pool, Admission: gate})
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE slow (id int); CREATE TABLE refused (id int)`); err != nil {
		t.Fatal(err)
	}
	testkit.CommitTrap(t, pool, "slow", testkit.CommitSleeps)
	testkit.CommitTrap(t, pool, "refused", testkit.CommitFails)
	// change writes a row of table through the catalog's commit; giveUp,
	// when not 0, cancels its context that long after the commit was sent.
	change := func(table string, giveUp time.Duration) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return svc.InTx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO `+table+` VALUES (1)`); err != nil {
				return err
			}
			if giveUp > 0 {
				time.AfterFunc(giveUp, cancel) // the commit follows at once
			}
			return nil
		})
	}
	// held: another node's admission lets it trust no copy of a clip.
	other := admission.NewGate(ks.Client, ks.Prefix, tenancy.NewUsage(pool, ks.Client, ks.Prefix), admission.GateOptions{PerMinute: 1000})
	defer other.Close()
	reader := admission.Caller{KeyID: uuid.New(), RootKeyID: uuid.New()}
	held := func() bool {
		t.Helper()
		d, err := other.Admit(ctx, reader)
		if err != nil || !d.Allowed {
			t.Fatalf("admission: %+v %v", d, err)
		}
		_, trusted := d.Pass.Version(admission.Catalog)
		return !trusted
	}

	if err := change("slow", 0); err != nil || held() {
		t.Fatalf("a committed change: error %v, catalog held after it %v", err, held())
	}
	if err := change("refused", 0); err == nil || held() {
		t.Fatalf("a change refused at commit: error %v, catalog held after it %v", err, held())
	}

	if err := change("slow", 200*time.Millisecond); err == nil {
		t.Fatal("a commit given up on returned no error")
	}
	if !held() {
		t.Error("the catalog was released after a commit whose outcome is unknown")
	}
	deadline := time.Now().Add(10 * time.Second)
	for testkit.Count(t, pool, `SELECT count(*) FROM slow`) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned commit never landed (%d rows): not the case described", testkit.Count(t, pool, `SELECT count(*) FROM slow`))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !held() {
		t.Error("the catalog is not held once the late commit landed")
	}
}
