package tenancy

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/displayname"
	"broll/internal/money"
	"broll/internal/outbox"
)

// Querier is what both a pool and a transaction offer, so that other
// packages can create accounts and keys inside their own transactions.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Kind tells root, customer and ops keys apart.
type Kind string

// Key kinds.
const (
	KindRoot     Kind = "root"
	KindCustomer Kind = "customer"
	KindOps      Kind = "ops"
)

// Account is a tenant with one shared balance.
type Account struct {
	ID           uuid.UUID
	Name         string
	Source       string
	BalanceCents int64
	CreatedAt    time.Time
}

// Key is an API key as stored: never the secret itself.
type Key struct {
	ID                 uuid.UUID
	AccountID          uuid.NullUUID
	Kind               Kind
	ParentID           uuid.NullUUID
	Label              string
	Scopes             []Scope
	Prefix             string
	RateLimitPerMinute *int
	SpendLimit         *SpendLimit // nil: no limit
	Spent              Spent
	SettingsVersion    int64 // bumped by every PATCH (admission.Gate.MarkChanged)
	// Test is a test-mode key's (dsk_test_): it buys from the account's
	// test balance and only ever sees test purchases. Root and ops keys
	// are live.
	Test bool
	// LicenseeName is printed on the key's licences (nil: none, shown as
	// "a customer of <account name>"); Label stays private.
	LicenseeName  *string
	TotalRequests int64
	LastUsedAt    *time.Time
	CreatedAt     time.Time
	RevokedAt     *time.Time
}

// dest are the scan targets of accountColumns.
func (a *Account) dest() []any {
	return []any{&a.ID, &a.Name, &a.Source, &a.BalanceCents, &a.CreatedAt}
}

// IssuedKey is a newly created key with its secret, shown exactly once.
type IssuedKey struct {
	Key
	Secret string
}

var sourceRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// NormalizeLabel checks a label others read (a customer key's label, an
// account's name) as displayname.Normalize does: trimmed, NFC, 1-200
// characters, no bidirectional or other controls, not only invisible.
func NormalizeLabel(field, label string, required bool) (string, error) {
	return displayname.Normalize(field, label, required)
}

// licenseeName checks a key's licensee name (nil: none) by the service's
// rule: also printable on the certificate.
func (s *Service) licenseeName(name *string) (*string, error) {
	if name == nil {
		return nil, nil
	}
	n, err := s.names.Name("licensee_name", *name)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// CreateAccount inserts an account with a zero balance. Credits are added by
// billing, which owns the ledger, in the same transaction q may be. The
// name is the platform's on its licences, checked by names.
func CreateAccount(ctx context.Context, q Querier, names displayname.Rule, name, source string) (Account, error) {
	name, err := names.Name("name", name)
	if err != nil {
		return Account{}, err
	}
	source = strings.TrimSpace(source)
	if !sourceRe.MatchString(source) {
		return Account{}, apperr.InvalidField("source",
			"source must be 1-63 characters of a-z, 0-9, '-' or '_', starting with a letter or digit")
	}
	var a Account
	err = q.QueryRow(ctx, createAccountSQL, name, source).Scan(a.dest()...)
	if database.IsUniqueViolation(err, "") {
		return Account{}, apperr.InvalidField("source", "source %q is already taken", apperr.Clip(source))
	}
	if err != nil {
		return Account{}, err
	}
	return a, nil
}

// GetAccount returns one account.
func (s *Service) GetAccount(ctx context.Context, id uuid.UUID) (Account, error) {
	var a Account
	err := s.pool.QueryRow(ctx, accountSQL, id).Scan(a.dest()...)
	return a, database.Interpret(err, "account not found")
}

// keyRow scans keyColumns into a Key, then any extra columns after them.
// Key nests its spending and its limit, which a struct scan by name or
// position cannot fill, hence the list of targets.
type keyRow struct {
	k           Key
	limitCents  *int64
	limitPeriod *string
}

func (r *keyRow) dest(extra ...any) []any {
	k := &r.k
	return append([]any{&k.ID, &k.AccountID, &k.Kind, &k.ParentID, &k.Label, &k.Scopes, &k.Prefix,
		&k.RateLimitPerMinute, &k.TotalRequests, &k.LastUsedAt, &k.CreatedAt, &k.RevokedAt,
		&r.limitCents, &r.limitPeriod, &k.SettingsVersion, &k.Test, &k.Spent.Amount, &k.Spent.PeriodStart, &k.Spent.ResetsAt, &k.LicenseeName}, extra...)
}

func (r *keyRow) key() Key {
	k := r.k
	if r.limitCents != nil && r.limitPeriod != nil {
		k.SpendLimit = &SpendLimit{Amount: money.Cents(*r.limitCents), Period: SpendPeriod(*r.limitPeriod)}
	}
	return k
}

func scanKey(row pgx.Row) (Key, error) {
	var r keyRow
	err := row.Scan(r.dest()...)
	return r.key(), err
}

// collectKey is scanKey for database.Select.
func collectKey(row pgx.CollectableRow) (Key, error) { return scanKey(row) }

func insertKey(ctx context.Context, q Querier, k Key) (IssuedKey, error) {
	secret := newKey(k.Test)
	limitCents, limitPeriod := k.SpendLimit.columns()
	// One statement, so key.created commits with the key even on a pool.
	row := q.QueryRow(ctx, insertKeySQL, k.AccountID, k.Kind, k.ParentID, k.Label, k.Scopes, hashKey(secret), displayedPrefix(secret),
		limitCents, limitPeriod, k.RateLimitPerMinute, outbox.KeyCreated, !k.Test, outbox.Trace(ctx), k.LicenseeName)
	created, err := scanKey(row)
	if err != nil {
		return IssuedKey{}, err
	}
	return IssuedKey{Key: created, Secret: secret}, nil
}

// CreateRootKey issues a root key for an account: all scopes, keys:manage included.
func CreateRootKey(ctx context.Context, q Querier, accountID uuid.UUID, label string) (IssuedKey, error) {
	label, err := NormalizeLabel("label", label, false)
	if err != nil {
		return IssuedKey{}, err
	}
	var exists bool
	if err := q.QueryRow(ctx, accountExistsSQL, accountID).Scan(&exists); err != nil {
		return IssuedKey{}, err
	}
	if !exists {
		return IssuedKey{}, apperr.NotFoundf("account not found")
	}
	return insertKey(ctx, q, Key{
		AccountID: uuid.NullUUID{UUID: accountID, Valid: true},
		Kind:      KindRoot, Label: label, Scopes: RootScopes(),
	})
}

// CreateRootKey is the pool form of the package function.
func (s *Service) CreateRootKey(ctx context.Context, accountID uuid.UUID, label string) (IssuedKey, error) {
	return s.issued(CreateRootKey(ctx, s.pool, accountID, label))
}

// CreateOpsKey issues a content-operations key (catalog:write only).
func (s *Service) CreateOpsKey(ctx context.Context, label string) (IssuedKey, error) {
	label, err := NormalizeLabel("label", label, false)
	if err != nil {
		return IssuedKey{}, err
	}
	return insertKey(ctx, s.pool, Key{Kind: KindOps, Label: label, Scopes: OpsScopes()})
}

// GetKey returns a key by id, revoked or not.
func (s *Service) GetKey(ctx context.Context, id uuid.UUID) (Key, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, keySQL, id))
	return k, database.Interpret(err, "key not found")
}
