package database_test

import (
	"context"
	"testing"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/testkit"
)

// TestInvalidText: what ValidText refuses is exactly what Postgres refuses,
// and the refusal maps to a client error, not an internal one.
func TestInvalidText(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	for _, s := range []string{"plain", "日本語 😀", "", "\xff", "a\x00b", "\xed\xa0\x80", "\xc3\x28", "\x00"} {
		var got string
		err := pool.QueryRow(ctx, `SELECT $1::text`, s).Scan(&got)
		if database.ValidText(s) != (err == nil) {
			t.Errorf("%q: ValidText %v, but Postgres says %v", s, database.ValidText(s), err)
		}
		if err == nil {
			continue
		}
		if !database.IsInvalidText(err) {
			t.Errorf("%q: IsInvalidText false for %v", s, err)
		}
		if code := apperr.CodeOf(database.Interpret(err, "")); code != apperr.Invalid {
			t.Errorf("%q: Interpret gives %s, want invalid_request", s, code)
		}
	}
}
