package billing

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/database"
	"broll/internal/money"
)

// An account's test balance is a row of its own (test_balances), made on
// the first test purchase with BROLL_TEST_BALANCE by the purchase statement
// (broll_test_balance_open). Like the live pool, it equals the sum of the
// account's test ledger (livemode false) at every commit.

// TestBalance returns an account's test balance: what it holds, or what it
// will start with when no test purchase made it yet.
func (s *Service) TestBalance(ctx context.Context, accountID uuid.UUID) (money.Cents, error) {
	var b int64
	err := s.pool.QueryRow(ctx, testBalanceSQL, accountID, int64(s.batch.testBalance)).Scan(&b)
	return money.Cents(b), database.Interpret(err, "account not found")
}

// ResetTestBalance sets an account's test balance back to what it starts
// with, recording the difference in the test ledger. Test purchases are
// kept: the keys still own what they bought, as a live key would.
func (s *Service) ResetTestBalance(ctx context.Context, accountID uuid.UUID) (money.Cents, error) {
	target := int64(s.batch.testBalance)
	var balance int64
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := currentBalance(ctx, tx, accountID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, testBalanceOpenSQL, accountID, target); err != nil {
			return err
		}
		// The row lock orders this with test purchases in flight.
		if err := tx.QueryRow(ctx, testBalanceLockSQL, accountID).Scan(&balance); err != nil {
			return err
		}
		if balance == target {
			return nil
		}
		if _, err := tx.Exec(ctx, testBalanceSetSQL, accountID, target); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, testBalanceResetLedgerSQL, accountID, target-balance)
		balance = target
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reset test balance: %w", err)
	}
	return money.Cents(balance), nil
}
