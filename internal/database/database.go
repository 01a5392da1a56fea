// Package database opens the Postgres pool, applies migrations and turns
// driver errors into application errors at the storage boundary.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jackc/puddle/v2"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"broll/internal/apperr"
	"broll/migrations"
)

// Option tunes the pool Open returns.
type Option func(*pgxpool.Config)

// StatementTimeout bounds every statement of every connection of the pool:
// it is a runtime parameter of the connection (sent at startup), so it holds
// for every query path, transactions included, without anyone remembering
// to set it. Postgres cancels a statement that runs longer with SQLSTATE
// 57014 (IsTimeout). Zero leaves the server's setting.
func StatementTimeout(d time.Duration) Option {
	return func(cfg *pgxpool.Config) {
		if d > 0 {
			cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(d.Milliseconds(), 10)
		}
	}
}

// Tracer traces every statement of the pool (telemetry's PoolTracer); nil
// traces nothing.
func Tracer(t pgx.QueryTracer) Option {
	return func(cfg *pgxpool.Config) {
		if t != nil {
			cfg.ConnConfig.Tracer = t
		}
	}
}

// Open connects a pool and registers the pgvector types on each connection.
// The schema must be migrated first (brollctl migrate).
func Open(ctx context.Context, url string, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("DATABASE_URL cannot be parsed")
	}
	for _, o := range opts {
		o(cfg)
	}
	// A pool size written in the URL is the operator's; otherwise the
	// service wants more than pgx's default of one per CPU.
	if cfg.MaxConns < 16 && !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = 16
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
			return fmt.Errorf("register vector type (is the database migrated? run `brollctl migrate`): %w", err)
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// Migrate applies every pending migration, then every function file
// (migrations/functions), and returns the migrations it applied. It is safe to run concurrently
// (a Postgres advisory lock serialises runners) and to run again.
func Migrate(ctx context.Context, url string, logger *slog.Logger) ([]string, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, errors.New("DATABASE_URL cannot be parsed")
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	return migrateDB(ctx, db, logger)
}

func migrateDB(ctx context.Context, db *sql.DB, logger *slog.Logger) ([]string, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	opts := []goose.ProviderOption{goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true)}
	if logger != nil {
		opts = append(opts, goose.WithSlog(logger))
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	applied := make([]string, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Path)
	}
	if err := applyFunctions(ctx, db); err != nil {
		return nil, err
	}
	return applied, nil
}

// Version reports the schema version the database is at.
func Version(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, schemaVersionSQL).Scan(&v)
	return v, err
}

// ServerStarted reports when the Postgres server the pool reaches started,
// which names that server process: another time means it restarted, or the
// pool now reaches another server (a failover), with empty buffers.
func ServerStarted(ctx context.Context, pool *pgxpool.Pool) (time.Time, error) {
	var t time.Time
	err := pool.QueryRow(ctx, serverStartedSQL).Scan(&t)
	return t, err
}

// NoRows reports whether err says a query that wanted a row found none
// (pgx.ErrNoRows, however wrapped). It is the one place the driver's
// sentinel is read; TestNoRowsReadInOnePlace holds every other package to it.
func NoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// Interpret maps driver errors to application errors: no rows becomes
// not_found with the given message, unique violations become conflict, text
// the server refuses (invalid UTF-8, NUL) becomes invalid_request. Other
// errors are returned wrapped and unchanged.
func Interpret(err error, notFound string) error {
	if err == nil {
		return nil
	}
	if NoRows(err) {
		return apperr.NotFoundf("%s", notFound)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return apperr.New(apperr.Conflict, "already exists")
		case "22021", "22P05":
			return apperr.New(apperr.Invalid, "text must be valid UTF-8 without NUL characters")
		}
	}
	if IsUnavailable(err) {
		return apperr.New(apperr.Unavailable, "database unavailable")
	}
	if IsTimeout(err) {
		return TimeoutError
	}
	return err
}

// TimeoutError is what a client is told when its query ran past the
// statement timeout: the service is overloaded or the request too costly
// right now, and a retry a little later may succeed.
var TimeoutError = apperr.New(apperr.Unavailable, "the request took too long and was cancelled; retry shortly or narrow it").
	With("retry_after_seconds", TimeoutRetryAfterSeconds)

// TimeoutRetryAfterSeconds is the Retry-After sent with a timed-out query.
const TimeoutRetryAfterSeconds = 5

// IsTimeout reports a statement cancelled by the server (SQLSTATE 57014,
// query_canceled): the statement timeout fired, or a cancel request came
// in because the caller's context ended.
func IsTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "57014"
}

// SetLocalStatementTimeout lifts (or lowers) the statement timeout for the
// rest of transaction tx only, for the few statements that are long by
// design (exports streamed to a client who asked for all of them).
func SetLocalStatementTimeout(ctx context.Context, tx pgx.Tx, d time.Duration) error {
	_, err := tx.Exec(ctx, localStatementTimeoutSQL, strconv.FormatInt(d.Milliseconds(), 10))
	return err
}

// IsUnavailable reports errors that say the database could not be reached
// or went away (refused or dropped connections, a connection found closed
// when the next statement was to go out on it, shutdown, a server still
// starting, a pool closed while the node shuts down) or is switching to a
// standby: the request may succeed when retried later, and clients get 503,
// not 500.
//
// A write refused as read-only (25006) is one of them: the service opens no
// read-only transaction for a write, so it only meets one on a server that
// is (still) in recovery, a standby not yet promoted or a primary demoted.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "25006":
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// ErrCommitUnconfirmed marks a commit error after which the transaction
// may have committed or not (CommitOutcomeUnknown): Commit and InTx wrap
// such errors with it, so that a caller can act on either outcome.
var ErrCommitUnconfirmed = errors.New("the commit's outcome is unknown")

// Commit commits tx, wrapping an error whose outcome is unknown with
// ErrCommitUnconfirmed.
func Commit(ctx context.Context, tx pgx.Tx) error {
	err := tx.Commit(ctx)
	if CommitOutcomeUnknown(err) {
		return fmt.Errorf("%w: %w", ErrCommitUnconfirmed, err)
	}
	return err
}

// CommitOutcomeUnknown reports an error of a commit (or of a statement
// that commits by itself) after which the transaction may have committed
// or not: the commit was sent and no answer says which. The connection was
// lost, the caller's context ended while it waited (pgx then drops the
// connection, and the server goes on with the commit), or the server ended
// the session (FATAL), which it may do after the commit's record is
// written, while the commit waits for a synchronous standby. An ERROR
// from the server rolled the transaction back, and an error before
// anything was sent (no connection, a context already ended) changed
// nothing: both are known outcomes. A context that ends while the pool
// has no connection to hand over counts as unknown: pgx returns the same
// bare context error as for one that ended mid-commit.
func CommitOutcomeUnknown(err error) bool {
	if err == nil || errors.Is(err, pgx.ErrTxCommitRollback) || pgconn.SafeToRetry(err) ||
		errors.Is(err, puddle.ErrClosedPool) {
		return false
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		severity := pgErr.SeverityUnlocalized
		if severity == "" {
			severity = pgErr.Severity
		}
		return severity == "FATAL" || severity == "PANIC"
	}
	return true
}

// IsUniqueViolation reports a 23505 error, optionally on a named constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		return false
	}
	return constraint == "" || pgErr.ConstraintName == constraint
}

// InTx runs fn in a transaction, committing on nil and rolling back
// otherwise. A commit whose outcome is unknown is ErrCommitUnconfirmed.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	return Commit(ctx, tx)
}

// IsRetryable reports errors after which the same transaction may simply be
// run again: deadlocks and serialization failures.
func IsRetryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// Queryer is what both a pool and a transaction offer for reading rows.
type Queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Select runs a query and collects every row with scan (pgx.RowTo[T],
// pgx.RowToStructByName[T] or a package's row scanner), so that a failed
// query and a failed row are one error for the caller to wrap.
func Select[T any](ctx context.Context, q Queryer, scan pgx.RowToFunc[T], query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scan)
}

// SelectOne is Select for a statement of one row (an INSERT or UPDATE ...
// RETURNING included): the first row, read with scan, or an error that is
// pgx.ErrNoRows when there is none, as QueryRow's Scan would say, for
// Interpret to map.
func SelectOne[T any](ctx context.Context, q Queryer, scan pgx.RowToFunc[T], query string, args ...any) (T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		var zero T
		return zero, err
	}
	return pgx.CollectOneRow(rows, scan)
}
