package database

// The statements this package sends itself (docs/architecture.md, "Where
// SQL lives"); the schema is migrations/, the rules its functions/.

// serverStartedSQL reads when the server process started: it changes with
// a restart, and with a failover to another server.
const serverStartedSQL = `SELECT pg_postmaster_start_time()`

// schemaVersionSQL reads the newest applied migration (0 before any).
const schemaVersionSQL = `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`

// localStatementTimeoutSQL sets statement_timeout to $1 milliseconds for
// the rest of the transaction only.
const localStatementTimeoutSQL = `SELECT set_config('statement_timeout', $1, true)`

// functionsLockSQL serialises migrators replacing the function files, for
// the rest of the transaction.
const functionsLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('broll:functions', 0))`
