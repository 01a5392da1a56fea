package replica

// The statements the replica check sends (docs/architecture.md, "Where SQL
// lives").

// standbySQL asks a server whether it is a standby and whether its replay
// reached $1, the primary's WAL position at the previous check.
const standbySQL = `SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`

// primaryLSNSQL reads the primary's current WAL position.
const primaryLSNSQL = `SELECT pg_current_wal_lsn()::text`
