-- +goose Up
-- The legacy v0 API has one shared secret for the whole service, so it
-- serves only the accounts an operator marks as v0 customers (`brollctl
-- legacy enable --source S`); any other source is answered as an unknown
-- one. Accounts that already bought through v0 stay enabled, so upgrading
-- cuts off no client that was using it.
ALTER TABLE accounts ADD COLUMN legacy_enabled boolean NOT NULL DEFAULT false;
UPDATE accounts a SET legacy_enabled = true
WHERE EXISTS (SELECT 1 FROM purchases p WHERE p.account_id = a.id AND p.legacy);

-- +goose Down
ALTER TABLE accounts DROP COLUMN legacy_enabled;
