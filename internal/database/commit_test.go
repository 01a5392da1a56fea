package database_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/database"
	"broll/internal/testkit"
)

// TestCommitOutcomeUnknown: a commit's error says whether the transaction
// may have committed, on real failures of each kind. One the server
// refused (an ERROR at commit) rolled back, as did a transaction already
// failed; a commit never sent changed nothing. A commit the client gave up
// on while the server committed is unknown, and the server lands it
// afterwards; so is one whose session the server ended.
func TestCommitOutcomeUnknown(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `
		CREATE TABLE plain (id int PRIMARY KEY); CREATE TABLE sleeps (id int PRIMARY KEY);
		CREATE TABLE fails (id int PRIMARY KEY); CREATE TABLE ends (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{testkit.CommitSleeps, testkit.CommitFails, testkit.CommitEndsSession} {
		testkit.CommitTrap(t, pool, a, a)
	}
	// commitTo commits, under ctx, a transaction that inserted a row into
	// table, and returns the commit's error; giveUp, when not 0, cancels
	// ctx that long after the commit was sent.
	commitTo := func(t *testing.T, ctx context.Context, table string, giveUp time.Duration) error {
		t.Helper()
		tx, err := pool.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		if _, err := tx.Exec(context.Background(), `INSERT INTO `+table+` VALUES (1)`); err != nil {
			t.Fatal(err)
		}
		if giveUp > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer time.AfterFunc(giveUp, cancel).Stop()
		}
		return tx.Commit(ctx)
	}
	landed := func(t *testing.T, table string) bool {
		t.Helper()
		return testkit.Count(t, pool, `SELECT count(*) FROM `+table) == 1
	}

	if database.CommitOutcomeUnknown(commitTo(t, ctx, "plain", 0)) {
		t.Error("a commit that succeeded is unknown")
	}

	err := commitTo(t, ctx, "fails", 0)
	if err == nil || database.CommitOutcomeUnknown(err) || landed(t, "fails") {
		t.Errorf("refused at commit: error %v, unknown %v, landed %v; want a known rollback",
			err, database.CommitOutcomeUnknown(err), landed(t, "fails"))
	}

	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := pool.Exec(ctx, `TRUNCATE plain`); err != nil {
		t.Fatal(err)
	}
	err = commitTo(t, gone, "plain", 0)
	if err == nil || database.CommitOutcomeUnknown(err) {
		t.Errorf("a commit under a context already ended: error %v, unknown %v; want known (never sent)",
			err, database.CommitOutcomeUnknown(err))
	}

	err = failedTxCommit(t, pool)
	if !errors.Is(err, pgx.ErrTxCommitRollback) || database.CommitOutcomeUnknown(err) {
		t.Errorf("the commit of a failed transaction: error %v, unknown %v", err, database.CommitOutcomeUnknown(err))
	}

	err = commitTo(t, ctx, "sleeps", 200*time.Millisecond)
	if err == nil || !database.CommitOutcomeUnknown(err) {
		t.Fatalf("a commit given up on while the server committed: error %v, unknown %v; want unknown",
			err, database.CommitOutcomeUnknown(err))
	}
	// What makes it unknown: the server goes on and commits it.
	deadline := time.Now().Add(10 * time.Second)
	for !landed(t, "sleeps") {
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned commit never landed (%v): not the case described", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	err = commitTo(t, ctx, "ends", 0)
	if err == nil || !database.CommitOutcomeUnknown(err) {
		t.Errorf("a commit whose session the server ended: error %v, unknown %v; want unknown",
			err, database.CommitOutcomeUnknown(err))
	}
}

// failedTxCommit commits a transaction a statement failed in.
func failedTxCommit(t *testing.T, pool *pgxpool.Pool) error {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1/0`); err == nil {
		t.Fatal("1/0 succeeded")
	}
	return tx.Commit(ctx)
}

// TestClosedConnectionIsUnavailable: a statement sent on a connection whose
// session the server ended (a failover, a restart) finds it closed. That
// is the database going away, not a fault of the request: 503, and the
// statement never went out, so a commit sent that way changed nothing.
func TestClosedConnectionIsUnavailable(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	// The first statement after the end meets the dropped session; the
	// next finds the connection closed.
	_, first := conn.Exec(ctx, `SELECT 1`)
	_, err = conn.Exec(ctx, `COMMIT`)
	if first == nil || err == nil {
		t.Fatalf("statements on an ended session: %v, %v", first, err)
	}
	if !database.IsUnavailable(first) || !database.IsUnavailable(err) {
		t.Errorf("IsUnavailable: %v for %q, %v for %q; want both", database.IsUnavailable(first), first,
			database.IsUnavailable(err), err)
	}
	if database.CommitOutcomeUnknown(err) {
		t.Errorf("a commit sent on a closed connection (%v) is unknown; it never went out", err)
	}
}
