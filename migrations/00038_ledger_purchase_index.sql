-- +goose NO TRANSACTION
-- +goose Up
-- The purchase statement inserts a batch's purchase rows before it locks
-- the account row, and deletes those of a job the lock's verdict refuses
-- (insufficient credits, a spend limit). Each such delete checks that no
-- ledger row names the purchase (ledger_purchase_id_fkey), and without an
-- index on ledger.purchase_id that check reads the whole ledger, while the
-- batch holds the account row. Top-ups and adjustments name no purchase,
-- so the index leaves them out.
-- CONCURRENTLY keeps purchases and top-ups writing the ledger while it is
-- built; should a build fail, drop the INVALID index it leaves and migrate
-- again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS ledger_purchase_idx ON ledger (purchase_id) WHERE purchase_id IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS ledger_purchase_idx;
