package database

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"

	"broll/migrations"
)

// applyFunctions runs every file of migrations/functions (CREATE OR REPLACE
// FUNCTION ...) in name order, in one transaction, after the numbered
// migrations: a function holds rules that change more often than tables, and
// replacing it needs no new migration. An advisory lock keeps two migrators
// from replacing the same function at once.
func applyFunctions(ctx context.Context, db *sql.DB) error {
	names, err := fs.Glob(migrations.FS, migrations.FunctionsDir+"/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("functions: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, functionsLockSQL); err != nil {
		return fmt.Errorf("functions: %w", err)
	}
	for _, name := range names {
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("functions: %s: %w", name, err)
		}
	}
	return tx.Commit()
}
