package billing

// purchaseBatchSQL runs purchases of one account through broll_purchase
// (migrations/00003_purchase_batch.sql), one statement doing everything:
//
//   - broll_purchase_check raises BR404 for unknown (or retired, not owned)
//     videos and BR409 for a wrong expected total; raising aborts the
//     purchase, so nothing is inserted or charged.
//   - New purchases are inserted in id order (no deadlock between two
//     requests of one key); a concurrent purchase of the same video by the
//     same key conflicts and is not charged.
//   - The charge runs last and only when something new was bought; the CHECK
//     constraint accounts_balance_not_negative refuses an overdraft (402).
//
// broll_purchase_batch runs several such purchases, each in its own
// subtransaction, in one transaction: the account row lock and the commit
// are paid once per batch instead of once per purchase.
const purchaseBatchSQL = `SELECT * FROM broll_purchase_batch($1, $2)`
