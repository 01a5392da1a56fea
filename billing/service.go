package billing

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/license"
	"broll/internal/admission"
	"broll/internal/displayname"
	"broll/internal/money"
	"broll/internal/telemetry"
	"broll/tenancy"
)

// Service is the billing store.
type Service struct {
	pool  *pgxpool.Pool
	links *Signer
	keys  *tenancy.Service
	batch *batcher
	// stamps takes the requests for licence-stamped copies (nil: none).
	stamps *license.Stamper
	names  displayname.Rule
}

// ServiceOptions are what a billing service is built from. The amounts are taken
// as given (zero is a threshold like any other): the composition root
// passes the configuration's, whose defaults are DefaultLowBalanceThreshold
// and DefaultTestBalance.
type ServiceOptions struct {
	// Links signs download links; nil where none are handed out, as in the
	// operator CLI.
	Links *Signer
	// Keys issues the customer keys of migrated legacy customers
	// (MigrateLegacyCustomers); required there.
	Keys *tenancy.Service
	// LowBalanceThreshold is the balance below which an account without a
	// threshold of its own gets balance.low (BROLL_LOW_BALANCE_THRESHOLD).
	LowBalanceThreshold money.Cents
	// TestBalance is what an account's test balance starts with and what
	// ResetTestBalance restores (BROLL_TEST_BALANCE).
	TestBalance money.Cents
	// Admission is told of every purchase, around its commit, for every
	// node's copies of what its key owns (admission.Owned); nil: nothing,
	// for services without Redis, whose nodes trust no copy without asking
	// Postgres.
	Admission admission.Door
	// Stamps is asked for the stamped copies of the files of live
	// purchases: after each batch commits and when a download finds none.
	// nil asks for none (the originals are served).
	Stamps *license.Stamper
	// Names is the rule an account's name is checked by (the platform's
	// name on its licences).
	Names displayname.Rule
	// Telemetry traces the purchase batches (batch_trace.go); nil traces
	// none.
	Telemetry *telemetry.Provider
}

// New returns the billing service over pool, as o says.
func New(pool *pgxpool.Pool, o ServiceOptions) *Service {
	b := newBatcher(pool)
	b.lowBalance, b.testBalance, b.stamps, b.admission = o.LowBalanceThreshold, o.TestBalance, o.Stamps, o.Admission
	b.tracer, b.tracing = o.Telemetry.Tracer("broll/billing"), o.Telemetry.On()
	return &Service{pool: pool, links: o.Links, keys: o.Keys, batch: b, stamps: o.Stamps, names: o.Names}
}
