package classify_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/internal/testkit"
)

// TestFailoverErrorsAreUnavailable: what a node meets while Postgres
// switches to its standby is 503 with a Retry-After, never 500: a
// connection the old primary's shutdown terminated (57P01), a write that
// landed on a server still read-only (25006), a server not accepting
// connections yet (57P03), and one refused outright.
func TestFailoverErrorsAreUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, url := testkit.NewPool(t)

	// The backend of a connection is terminated, as a shutdown does to
	// every session of the primary.
	victim, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Close(context.Background()) })
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, victim.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	_, terminatedErr := victim.Exec(ctx, "SELECT 1")

	// A write in a read-only session: what a write meets on a server that
	// is (still) a standby.
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	_, readOnlyErr := tx.Exec(ctx, `CREATE TABLE failover_probe (a int)`)
	_ = tx.Rollback(ctx)

	for name, err := range map[string]error{
		"admin shutdown":          terminatedErr,
		"read-only transaction":   readOnlyErr,
		"cannot connect now":      &pgconn.PgError{Severity: "FATAL", Code: "57P03", Message: "the database system is starting up"},
		"wrapped read-only error": fmt.Errorf("purchase: %w", readOnlyErr),
	} {
		t.Run(name, func(t *testing.T) {
			if err == nil {
				t.Fatal("no error to classify")
			}
			out := classify.Error(err)
			if out.Status != http.StatusServiceUnavailable || out.Err.Code != apperr.Unavailable || !out.Known {
				t.Fatalf("%v: %d %s known=%v", err, out.Status, out.Err.Code, out.Known)
			}
			if classify.RetryAfter(out.Err) < 1 {
				t.Fatalf("%v: no Retry-After", err)
			}
		})
	}
}
