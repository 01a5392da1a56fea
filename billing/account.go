package billing

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
	"broll/tenancy"
)

// OpenedAccount is a new account with its first root key.
type OpenedAccount struct {
	Account tenancy.Account
	RootKey tenancy.IssuedKey
}

// OpenAccount creates an account, its first root key and its opening balance
// in one transaction: either all of it exists afterwards or none of it. The
// field named in an error is "credits", the operator CLI's flag.
func (s *Service) OpenAccount(ctx context.Context, name, source string, opening money.Cents) (OpenedAccount, error) {
	if opening < 0 || opening > money.MaxCents {
		return OpenedAccount{}, apperr.InvalidField("credits", "credits must be between 0 and %s", money.MaxCents)
	}
	var out OpenedAccount
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		acct, err := tenancy.CreateAccount(ctx, tx, s.names, name, source)
		if err != nil {
			return err
		}
		key, err := tenancy.CreateRootKey(ctx, tx, acct.ID, "root")
		if err != nil {
			return err
		}
		if opening > 0 {
			if acct.BalanceCents, err = topUp(ctx, tx, acct.ID, opening, "opening balance"); err != nil {
				return err
			}
		}
		out = OpenedAccount{Account: acct, RootKey: key}
		return nil
	})
	return out, err
}

// errTopUpUnconfirmed answers a top-up whose commit's outcome is unknown:
// adding it again blindly could credit the account twice.
var errTopUpUnconfirmed = apperr.New(apperr.Unavailable,
	"the top-up could not be confirmed: it may have been applied; read the account's ledger before adding it again")

// TopUp adds amount to an account's balance and records it in the ledger
// as a top-up.
func (s *Service) TopUp(ctx context.Context, accountID uuid.UUID, amount money.Cents, note string) (money.Cents, error) {
	if amount <= 0 || amount > money.MaxCents {
		return 0, apperr.InvalidField("amount", "amount must be more than 0 and at most %s", money.MaxCents)
	}
	var balance int64
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		balance, err = topUp(ctx, tx, accountID, amount, note)
		return err
	})
	if errors.Is(err, database.ErrCommitUnconfirmed) {
		return 0, errTopUpUnconfirmed
	}
	return money.Cents(balance), err
}

func topUp(ctx context.Context, tx pgx.Tx, accountID uuid.UUID, amount money.Cents, note string) (int64, error) {
	var balance int64
	err := tx.QueryRow(ctx, topUpSQL, accountID, int64(amount)).Scan(&balance)
	if err != nil {
		return 0, database.Interpret(err, "account not found")
	}
	_, err = tx.Exec(ctx, topUpLedgerSQL, accountID, int64(amount), note)
	return balance, err
}

func currentBalance(ctx context.Context, q tenancy.Querier, accountID uuid.UUID) (money.Cents, error) {
	var b int64
	err := q.QueryRow(ctx, balanceSQL, accountID).Scan(&b)
	return money.Cents(b), database.Interpret(err, "account not found")
}

// SetAccountLowBalance sets (or, with nil, clears back to the default) an
// account's balance.low threshold.
func (s *Service) SetAccountLowBalance(ctx context.Context, account uuid.UUID, c *money.Cents) error {
	if c != nil && *c < 0 {
		return apperr.InvalidField("low_balance", "the low-balance threshold cannot be negative")
	}
	tag, err := s.pool.Exec(ctx, setLowBalanceSQL, account, c)
	if err != nil {
		return fmt.Errorf("set low balance: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.NotFoundf("account not found")
	}
	return nil
}
