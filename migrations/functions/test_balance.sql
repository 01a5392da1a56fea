-- broll_test_balance_open: makes an account's test balance row with
-- in_amount (BROLL_TEST_BALANCE) unless it exists, and records what it
-- starts with in the ledger (livemode false), so that the test ledger sums
-- to the test balance from the first row on. The purchase statement calls
-- it before a test batch takes the row's lock, and `brollctl credits
-- reset-test` before it resets the row.
CREATE OR REPLACE FUNCTION broll_test_balance_open(in_account uuid, in_amount bigint)
RETURNS void
LANGUAGE sql VOLATILE
AS $$
    WITH made AS (
        INSERT INTO test_balances (account_id, balance_cents) VALUES (in_account, in_amount)
        ON CONFLICT (account_id) DO NOTHING
        RETURNING account_id
    )
    INSERT INTO ledger (account_id, amount_cents, kind, note, livemode)
    SELECT account_id, in_amount, 'topup', 'test balance', false FROM made WHERE in_amount > 0;
$$;
