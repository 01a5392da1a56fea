-- +goose NO TRANSACTION
-- +goose Up
-- Keyset paging of the purchase and key lists: each list's order has an
-- index that yields it as it is, id included, so that a page after a cursor
-- is one range scan however deep it is. The new purchase indexes end in id
-- and so serve every query the (..., purchased_at) ones served (month to date,
-- spend periods); the old ones go. CONCURRENTLY keeps purchases and key
-- creation running while a large table is indexed.
CREATE INDEX CONCURRENTLY IF NOT EXISTS purchases_account_time_id_idx ON purchases (account_id, purchased_at, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS purchases_key_time_id_idx ON purchases (api_key_id, purchased_at, id);
DROP INDEX CONCURRENTLY IF EXISTS purchases_account_time_idx;
DROP INDEX CONCURRENTLY IF EXISTS purchases_key_time_idx;
-- GET /api/v1/keys: a root key's customer keys, oldest first.
CREATE INDEX CONCURRENTLY IF NOT EXISTS api_keys_parent_created_idx ON api_keys (parent_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS api_keys_parent_idx;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS api_keys_parent_idx ON api_keys (parent_id);
DROP INDEX CONCURRENTLY IF EXISTS api_keys_parent_created_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS purchases_key_time_idx ON purchases (api_key_id, purchased_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS purchases_account_time_idx ON purchases (account_id, purchased_at);
DROP INDEX CONCURRENTLY IF EXISTS purchases_key_time_id_idx;
DROP INDEX CONCURRENTLY IF EXISTS purchases_account_time_id_idx;
