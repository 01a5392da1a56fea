package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/testkit"
)

// TestSelectOne: a statement's first row comes back as the struct its
// columns name; no row is pgx.ErrNoRows, which Interpret maps to
// not_found; an error the statement meets after its first row is the
// caller's, not a half-read row.
func TestSelectOne(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	type pair struct {
		Name  string
		Count int
	}
	t.Run("row", func(t *testing.T) {
		got, err := database.SelectOne(ctx, pool, pgx.RowToStructByName[pair],
			`SELECT 3 AS count, $1::text AS name`, "x")
		if err != nil || got != (pair{Name: "x", Count: 3}) {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
	t.Run("no row", func(t *testing.T) {
		_, err := database.SelectOne(ctx, pool, pgx.RowToStructByName[pair],
			`SELECT 'x' AS name, 1 AS count WHERE false`)
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("err %v, want pgx.ErrNoRows", err)
		}
		if code := apperr.CodeOf(database.Interpret(err, "pair not found")); code != apperr.NotFound {
			t.Fatalf("Interpret gives %s, want not_found", code)
		}
	})
	t.Run("error after the first row", func(t *testing.T) {
		_, err := database.SelectOne(ctx, pool, pgx.RowTo[int],
			`SELECT 1 / (2 - g) FROM generate_series(1, 2) AS g`)
		if err == nil {
			t.Fatal("the division by zero on the second row was not reported")
		}
	})
}
