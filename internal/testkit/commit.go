package testkit

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Actions of CommitTrap, at the commit of a transaction that wrote the
// trapped table.
const (
	// CommitSleeps sleeps a second before the commit completes, or until a
	// cancel request comes, and commits all the same: a client that gives
	// up sends one (pgx does), and a commit already past its point of no
	// return (its WAL flushed, waiting for a synchronous standby) goes on
	// regardless. The client sees an error and the transaction commits
	// after it.
	CommitSleeps = "sleeps"
	// CommitFails raises an ERROR: the server answers, the transaction
	// rolls back.
	CommitFails = "fails"
	// CommitEndsSession ends its own session (FATAL 57P01) before the
	// commit completes: the client cannot tell what became of it.
	CommitEndsSession = "ends"
)

// CommitTrap makes every transaction that inserts or updates a row of
// table, in pool's database, do action at its commit (a deferred
// constraint trigger), for tests of what a caller does when a commit
// fails in one of those ways. The function it returns removes the trap.
func CommitTrap(t testing.TB, pool *pgxpool.Pool, table, action string) (remove func()) {
	t.Helper()
	body := map[string]string{
		CommitSleeps: `BEGIN
            PERFORM pg_sleep(1);
        EXCEPTION WHEN query_canceled THEN
            NULL; -- the client has given up; the commit goes on
        END;`,
		CommitFails:       `RAISE EXCEPTION 'refused at commit';`,
		CommitEndsSession: `PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5);`,
	}[action]
	if body == "" {
		t.Fatalf("CommitTrap: unknown action %q", action)
	}
	fn := pgx.Identifier{"commit_trap_" + table}.Sanitize()
	sql := `CREATE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        ` + body + `
        RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER commit_trap AFTER INSERT OR UPDATE ON ` + pgx.Identifier{table}.Sanitize() + `
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ` + fn + `();`
	if _, err := pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("CommitTrap on %s: %v", table, err)
	}
	return func() {
		t.Helper()
		if _, err := pool.Exec(context.Background(), `DROP TRIGGER commit_trap ON `+pgx.Identifier{table}.Sanitize()); err != nil {
			t.Fatalf("remove the CommitTrap on %s: %v", table, err)
		}
	}
}
