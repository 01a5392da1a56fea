package database_test

import (
	"context"
	"log/slog"
	"strings"
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

// TestMigrateFromBeforeTestMode: a database migrated by a release from
// before test mode (schema version 11, the purchase function's eight
// argument form) migrates to today's schema, and keeps one purchase
// function, today's: the function file's CREATE OR REPLACE cannot replace
// a form with other arguments, so 00021 drops the old one.
func TestMigrateFromBeforeTestMode(t *testing.T) {
	t.Parallel()
	url, db := testkit.DatabaseAt(t, 11)
	ctx := context.Background()
	// That release's function: its arguments and result, a stand-in body.
	if _, err := db.ExecContext(ctx, `CREATE FUNCTION broll_purchase_batch(
		in_account uuid, in_key uuid[], in_email text[], in_expected bigint[], in_dry boolean[],
		in_line_job int[], in_line_video uuid[], in_purchase uuid[])
		RETURNS TABLE (r_job int, r_verdict text, r_quote bigint, r_available bigint, r_balance bigint,
		               r_video_id uuid, r_known boolean, r_purchase_id uuid, r_price_cents bigint,
		               r_purchased_at timestamptz, r_owned boolean,
		               r_limit bigint, r_period text, r_spent bigint, r_resets_at timestamptz)
		LANGUAGE plpgsql AS $$ BEGIN END; $$`); err != nil {
		t.Fatal(err)
	}
	applied, err := database.Migrate(ctx, url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("migrate from the release before test mode: %v", err)
	}
	if len(applied) == 0 {
		t.Fatal("no migration applied after version 11")
	}
	var forms []string
	rows, err := db.QueryContext(ctx, `SELECT pg_get_function_identity_arguments(oid) FROM pg_proc
		WHERE proname = 'broll_purchase_batch' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		forms = append(forms, f)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(forms) != 1 || !strings.Contains(forms[0], "in_livemode boolean, in_test_balance bigint") {
		t.Fatalf("purchase functions after migrate: %q, want today's form alone", forms)
	}
}
