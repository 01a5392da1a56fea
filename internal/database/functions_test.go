package database_test

import (
	"context"
	"log/slog"
	"testing"

	"broll/internal/database"
	"broll/internal/testkit"
)

// TestMigrateAppliesFunctions: migrate installs the function files and, run
// again with no migration pending, replaces them: a changed rule reaches a
// migrated database without a new migration.
func TestMigrateAppliesFunctions(t *testing.T) {
	t.Parallel()
	url := testkit.NewEmptyDatabase(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	if _, err := database.Migrate(ctx, url, log); err != nil {
		t.Fatal(err)
	}
	pool, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	body := func() string {
		var src string
		if err := pool.QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE proname = 'broll_purchase_batch'`).Scan(&src); err != nil {
			t.Fatalf("broll_purchase_batch after migrate: %v", err)
		}
		return src
	}
	installed := body()
	// The stand-in takes the installed signature, whatever it is today.
	var args, result string
	if err := pool.QueryRow(ctx, `SELECT pg_get_function_arguments(oid), pg_get_function_result(oid)
		FROM pg_proc WHERE proname = 'broll_purchase_batch'`).Scan(&args, &result); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE OR REPLACE FUNCTION broll_purchase_batch(`+args+`) RETURNS `+result+`
		LANGUAGE plpgsql AS $$ BEGIN END; $$`); err != nil {
		t.Fatal(err)
	}
	if body() == installed {
		t.Fatal("the stand-in did not replace the function")
	}
	if applied, err := database.Migrate(ctx, url, log); err != nil || len(applied) != 0 {
		t.Fatalf("second migrate: %v %v", applied, err)
	}
	if body() != installed {
		t.Fatal("migrate did not put the function file back")
	}
}
