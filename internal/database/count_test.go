package database_test

import (
	"context"
	"database/sql"
	"testing"
)

// counter returns a count of db's rows by a query that yields one number,
// failing t when it cannot run.
func counter(t *testing.T, db *sql.DB) func(query string) int {
	return func(query string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}
