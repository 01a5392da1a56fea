package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
)

// SuspectPurchase is a purchase whose link was fetched from more distinct
// client addresses than the audit threshold: a redistribution pattern.
type SuspectPurchase struct {
	PurchaseID    uuid.UUID  `json:"purchase_id"`
	AccountID     uuid.UUID  `json:"account_id"`
	APIKeyID      *uuid.UUID `json:"api_key_id"`
	CustomerLabel string     `json:"customer_label"`
	VideoID       uuid.UUID  `json:"video_id"`
	Addresses     int        `json:"distinct_addresses"`
	Downloads     int        `json:"downloads"`
	First         time.Time  `json:"first_download_at"`
	Last          time.Time  `json:"last_download_at"`
}

// SuspectKey sums the suspect purchases of one key.
type SuspectKey struct {
	APIKeyID         *uuid.UUID `json:"api_key_id"`
	AccountID        uuid.UUID  `json:"account_id"`
	CustomerLabel    string     `json:"customer_label"`
	SuspectPurchases int        `json:"suspect_purchases"`
	MaxAddresses     int        `json:"max_distinct_addresses"`
}

// AuditReport is the outcome of a download audit.
type AuditReport struct {
	Since     time.Time         `json:"since"`
	Threshold int               `json:"threshold"`
	Purchases []SuspectPurchase `json:"purchases"`
	Keys      []SuspectKey      `json:"keys"`
}

// AuditDownloads lists purchases fetched from more than threshold distinct
// addresses since the given time, and the keys they belong to.
func (s *Service) AuditDownloads(ctx context.Context, since time.Time, threshold int) (AuditReport, error) {
	if threshold < 1 {
		return AuditReport{}, apperr.InvalidField("threshold", "threshold must be at least 1")
	}
	rep := AuditReport{Since: since.UTC(), Threshold: threshold, Purchases: []SuspectPurchase{}, Keys: []SuspectKey{}}
	suspects, err := database.Select(ctx, s.pool, pgx.RowToStructByPos[SuspectPurchase], auditSQL, since, threshold)
	if err != nil {
		return rep, fmt.Errorf("audit: %w", err)
	}
	keys := map[string]*SuspectKey{}
	var order []string
	for _, sp := range suspects {
		rep.Purchases = append(rep.Purchases, sp)
		k := sp.AccountID.String() + "/legacy"
		if sp.APIKeyID != nil {
			k = sp.APIKeyID.String()
		}
		sk, ok := keys[k]
		if !ok {
			sk = &SuspectKey{APIKeyID: sp.APIKeyID, AccountID: sp.AccountID, CustomerLabel: sp.CustomerLabel}
			keys[k] = sk
			order = append(order, k)
		}
		sk.SuspectPurchases++
		sk.MaxAddresses = max(sk.MaxAddresses, sp.Addresses)
	}
	for _, k := range order {
		rep.Keys = append(rep.Keys, *keys[k])
	}
	return rep, nil
}

// StatementLine is one key's purchases in a month.
type StatementLine struct {
	APIKeyID      *uuid.UUID  `json:"api_key_id"`
	CustomerLabel string      `json:"customer_label"`
	Kind          string      `json:"kind"`
	Purchases     int         `json:"purchases"`
	Amount        money.Cents `json:"amount"`
}

// Statement is an account's monthly reconciliation: per-key totals that add
// up to what the purchases list reports for the same period.
type Statement struct {
	AccountID uuid.UUID       `json:"account_id"`
	Month     string          `json:"month"`
	StartDate string          `json:"start_date"`
	EndDate   string          `json:"end_date"`
	Currency  string          `json:"currency"`
	Keys      []StatementLine `json:"keys"`
	Purchases int             `json:"purchases"`
	Amount    money.Cents     `json:"amount"`
	// LedgerCharges is the sum of the month's purchase charges in the ledger;
	// it equals Amount unless a purchase was free.
	LedgerCharges money.Cents `json:"ledger_charges"`
}

// MonthlyStatement builds the statement of one account for month "YYYY-MM"
// (UTC): live money only, test-mode purchases are no part of it.
func (s *Service) MonthlyStatement(ctx context.Context, accountID uuid.UUID, month string) (Statement, error) {
	start, err := time.Parse("2006-01", month)
	if err != nil {
		return Statement{}, apperr.InvalidField("month", "month %q is not YYYY-MM", apperr.Clip(month))
	}
	end := start.AddDate(0, 1, 0)
	st := Statement{AccountID: accountID, Month: month, Currency: "USD", Keys: []StatementLine{},
		StartDate: start.Format("2006-01-02"), EndDate: end.AddDate(0, 0, -1).Format("2006-01-02")}
	if _, err := currentBalance(ctx, s.pool, accountID); err != nil {
		return st, err
	}
	st.Keys, err = database.Select(ctx, s.pool, pgx.RowToStructByPos[StatementLine], statementKeysSQL, accountID, start, end)
	if err != nil {
		return st, fmt.Errorf("statement: %w", err)
	}
	for _, l := range st.Keys {
		st.Purchases += l.Purchases
		st.Amount += l.Amount
	}
	err = s.pool.QueryRow(ctx, statementLedgerChargesSQL, accountID, start, end).Scan(&st.LedgerCharges)
	return st, err
}
