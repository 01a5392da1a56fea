package database_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"broll/internal/database"
	"broll/internal/testkit"
)

// TestMigrateTwiceAndConcurrently: migrations apply once, a second run is a
// no-op, and parallel runners (two API nodes starting at once) do not clash.
func TestMigrateTwiceAndConcurrently(t *testing.T) {
	t.Parallel()
	url := testkit.NewEmptyDatabase(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)

	var wg sync.WaitGroup
	errs := make([]error, 3)
	applied := make([][]string, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied[i], errs[i] = database.Migrate(ctx, url, log)
		}()
	}
	wg.Wait()
	total := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("runner %d: %v", i, err)
		}
		total += len(applied[i])
	}
	if total == 0 {
		t.Fatal("no migration applied")
	}
	again, err := database.Migrate(ctx, url, log)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run applied %v, %v", again, err)
	}
	pool, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	v, err := database.Version(ctx, pool)
	if err != nil || v < 1 {
		t.Fatalf("version %d %v", v, err)
	}
	// The schema's money guard is in place.
	if _, err := pool.Exec(ctx, `INSERT INTO accounts (name, source, balance_cents) VALUES ('x', 'x', -1)`); err == nil {
		t.Fatal("negative balance accepted")
	}
}

func TestLedgerIsAppendOnly(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	var id string
	if err := pool.QueryRow(ctx, `INSERT INTO accounts (name, source) VALUES ('a', 'a') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO ledger (account_id, amount_cents, kind) VALUES ($1, 100, 'topup')`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE ledger SET amount_cents = 1`); err == nil {
		t.Fatal("ledger row updated")
	}
	if _, err := pool.Exec(ctx, `DELETE FROM ledger`); err == nil {
		t.Fatal("ledger row deleted")
	}
}
