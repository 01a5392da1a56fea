-- +goose Up
-- Test mode: a customer key made with "mode": "test" buys from the
-- account's test balance through the same purchase statement. Root and ops
-- keys are always live. Every existing row is live, hence the defaults
-- (an ADD COLUMN with a constant default rewrites nothing).
ALTER TABLE api_keys ADD COLUMN livemode boolean NOT NULL DEFAULT true,
    ADD CONSTRAINT api_keys_test_is_customer CHECK (livemode OR kind = 'customer');
ALTER TABLE purchases ADD COLUMN livemode boolean NOT NULL DEFAULT true,
    -- Legacy (v0) buyers have no key and are always live.
    ADD CONSTRAINT purchases_test_has_key CHECK (livemode OR NOT legacy);
ALTER TABLE ledger ADD COLUMN livemode boolean NOT NULL DEFAULT true;

-- The test balance lives in a row of its own, so that test purchases lock
-- this row and never the account row that every live purchase of the
-- account queues on. It is made on first use with BROLL_TEST_BALANCE (and
-- a ledger row saying so): sum(ledger.amount_cents WHERE NOT livemode) per
-- account equals balance_cents here at every commit, as the live ledger
-- equals accounts.balance_cents.
CREATE TABLE test_balances (
    account_id    uuid PRIMARY KEY REFERENCES accounts (id),
    balance_cents bigint NOT NULL CONSTRAINT test_balances_not_negative CHECK (balance_cents >= 0)
);

-- Live listings keep their keyset indexes (purchases_account_time_id_idx
-- and purchases_key_time_id_idx of 00008: test rows are few and filtered
-- out on the way). The dashboard's test view of a whole account pages this
-- one in the same (purchased_at, id) order.
CREATE INDEX purchases_test_account_time_id_idx ON purchases (account_id, purchased_at, id) WHERE NOT livemode;

-- +goose Down
DROP INDEX purchases_test_account_time_id_idx;
DROP TABLE test_balances;
ALTER TABLE ledger DROP COLUMN livemode;
ALTER TABLE purchases DROP CONSTRAINT purchases_test_has_key, DROP COLUMN livemode;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_test_is_customer, DROP COLUMN livemode;
