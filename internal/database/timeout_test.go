package database_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/testkit"
)

// TestStatementTimeout: the pool's timeout holds for every statement, in a
// transaction too; a statement past it is a timeout that the storage
// boundary turns into unavailable; a transaction may lift it for itself.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	url := testkit.NewDatabase(t)
	ctx := context.Background()
	pool, err := database.Open(ctx, url, database.StatementTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	var setting string
	if err := pool.QueryRow(ctx, `SHOW statement_timeout`).Scan(&setting); err != nil || setting != "200ms" {
		t.Fatalf("statement_timeout %q (%v), want 200ms", setting, err)
	}
	_, err = pool.Exec(ctx, `SELECT pg_sleep(2)`)
	if !database.IsTimeout(err) {
		t.Fatalf("a 2 s statement under a 200 ms timeout: %v", err)
	}
	if ae, ok := apperr.As(database.Interpret(err, "")); !ok || ae.Code != apperr.Unavailable {
		t.Fatalf("interpreted as %v, want unavailable", database.Interpret(err, ""))
	}
	err = database.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT pg_sleep(2)`)
		return err
	})
	if !database.IsTimeout(err) {
		t.Fatalf("in a transaction: %v", err)
	}
	err = database.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := database.SetLocalStatementTimeout(ctx, tx, 5*time.Second); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_sleep(0.3)`)
		return err
	})
	if err != nil {
		t.Fatalf("with the timeout lifted for the transaction: %v", err)
	}
	if err := pool.QueryRow(ctx, `SHOW statement_timeout`).Scan(&setting); err != nil || setting != "200ms" {
		t.Fatalf("after the transaction: %q (%v), want 200ms again", setting, err)
	}
}

// TestPoolSize: the pool holds at least 16 connections unless the URL
// names its own size, which then holds as written.
func TestPoolSize(t *testing.T) {
	t.Parallel()
	url := testkit.NewDatabase(t)
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		want int32
	}{
		{url, 16},
		{url + sep(url) + "pool_max_conns=1", 1},
		{url + sep(url) + "pool_max_conns=40", 40},
	} {
		pool, err := database.Open(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := pool.Config().MaxConns; got != c.want {
			t.Errorf("%s: %d connections, want %d", c.url[len(url):], got, c.want)
		}
		pool.Close()
	}
}

func sep(url string) string {
	if strings.Contains(url, "?") {
		return "&"
	}
	return "?"
}
