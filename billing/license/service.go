package license

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/visible"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
	"broll/tenancy"
)

// ServiceOptions are what a licence service is built from (the composition root
// passes the configuration's).
type ServiceOptions struct {
	// Keys signs the documents.
	Keys *Keyring
	// Licensor is the service's name on every licence (BROLL_LICENSOR_NAME).
	Licensor string
	// TermsVersion and TermsURL name the licence terms (BROLL_LICENSE_TERMS_*).
	TermsVersion string
	TermsURL     string
	// BaseURL is the service's public URL: a licence's verify URL is
	// BaseURL/licenses/<id>.
	BaseURL string
	// Fonts print the certificates (LoadFonts).
	Fonts *Fonts
	// Stamps removes a revoked licence's stamped copy; nil: a process
	// without the media store, which leaves it to the next stamp task.
	Stamps *Stamper
}

// Service reads, signs and revokes licences.
type Service struct {
	pool *pgxpool.Pool
	o    ServiceOptions
}

// New returns the licence service over pool.
func New(pool *pgxpool.Pool, o ServiceOptions) *Service {
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	return &Service{pool: pool, o: o}
}

// Keys is the keyring that signs (its JWKS is served publicly).
func (s *Service) Keys() *Keyring { return s.o.Keys }

// Ref is how a purchase names its licence.
type Ref struct {
	ID        string `json:"id"`
	Status    Status `json:"status"`
	VerifyURL string `json:"verify_url"`
}

// Ref names licence id in a purchase result or record.
func (s *Service) Ref(id string, revoked bool) Ref {
	st := Active
	if revoked {
		st = Revoked
	}
	return Ref{ID: id, Status: st, VerifyURL: s.VerifyURL(id)}
}

// VerifyURL is the public page of licence id.
func (s *Service) VerifyURL(id string) string { return verifyURL(s.o.BaseURL, id) }

// verifyURL is the public page of licence id on the service at base.
func verifyURL(base, id string) string { return strings.TrimRight(base, "/") + "/licenses/" + id }

// licenseRow is a row of licenseColumns.
type licenseRow struct {
	ID            string
	Livemode      bool
	RevokedAt     *time.Time
	RevokedReason *string
	ClipID        uuid.UUID
	ClipTitle     string
	LicenseeName  *string
	Platform      string
	GrantedAt     time.Time
	PriceCents    int64
	PurchaseID    uuid.UUID
}

// missing is looked up in place of a malformed id: it matches no licence.
const missing = "lic_-"

func (s *Service) read(ctx context.Context, id string) (licenseRow, bool, error) {
	return s.readWhere(ctx, id, nil)
}

// readVisible reads licence id if principal p sees its purchase (the one
// rule, billing/visible): the purchase's key, its root, the account's
// owners, with test purchases apart from live ones.
func (s *Service) readVisible(ctx context.Context, p tenancy.Principal, id string) (licenseRow, bool, error) {
	return s.readWhere(ctx, id, &p)
}

func (s *Service) readWhere(ctx context.Context, id string, p *tenancy.Principal) (licenseRow, bool, error) {
	if !ValidID(id) {
		id = missing
	}
	q, args := licenseSQL, []any{id}
	if p != nil {
		q += " AND " + visible.Purchases(*p, "p", func(v any) string {
			args = append(args, v)
			return "$" + strconv.Itoa(len(args))
		})
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return licenseRow{}, false, err
	}
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[licenseRow])
	if database.NoRows(err) {
		return licenseRow{}, false, nil
	}
	return r, err == nil, err
}

func (s *Service) document(r licenseRow) Document {
	d := Document{
		LicenseID: r.ID, Livemode: r.Livemode, Status: Active,
		Clip:      Clip{ID: r.ClipID.String(), Title: r.ClipTitle},
		Licensee:  Licensee{Name: r.LicenseeName, Platform: r.Platform},
		Licensor:  s.o.Licensor,
		Terms:     Terms{Type: TermsType, Redistribution: false, Version: s.o.TermsVersion, URL: s.o.TermsURL},
		GrantedAt: r.GrantedAt.UTC().Truncate(time.Second), PurchaseID: r.PurchaseID.String(),
		Currency: "USD", VerifyURL: s.VerifyURL(r.ID),
	}
	price := Dollars(money.Cents(r.PriceCents))
	d.PricePaid = &price
	if r.RevokedAt != nil {
		at := r.RevokedAt.UTC().Truncate(time.Second)
		d.Status, d.RevokedAt = Revoked, &at
		if r.RevokedReason != nil {
			d.RevokedReason = *r.RevokedReason
		}
	}
	return d
}

var errNotFound = apperr.New(apperr.NotFound, "licence not found")

// Get returns licence id signed, as its holder sees it (the purchase's key
// or its root); any other caller gets not_found, as for an unknown id.
func (s *Service) Get(ctx context.Context, p tenancy.Principal, id string) (Signed, error) {
	r, ok, err := s.readVisible(ctx, p, id)
	if err != nil {
		return Signed{}, database.Interpret(err, "licence not found")
	}
	if !ok {
		return Signed{}, errNotFound
	}
	return s.o.Keys.Sign(s.document(r))
}

// Show is Get for the operator (brollctl license show): any licence.
func (s *Service) Show(ctx context.Context, id string) (Signed, error) {
	r, ok, err := s.read(ctx, id)
	if err != nil {
		return Signed{}, database.Interpret(err, "licence not found")
	}
	if !ok {
		return Signed{}, errNotFound
	}
	return s.o.Keys.Sign(s.document(r))
}

// placeholder is signed when a public lookup finds nothing, so that an
// unknown id costs what a known one does.
var placeholder = Document{LicenseID: missing, Status: Active, Terms: Terms{Type: TermsType}}

// Public returns licence id's public view, signed, for anyone who has the
// id (the verify page): no price, purchase, reason or key. An unknown or
// malformed id is not_found after the same lookup and signature as a
// known one.
func (s *Service) Public(ctx context.Context, id string) (Signed, error) {
	r, ok, err := s.read(ctx, id)
	if err != nil {
		return Signed{}, database.Interpret(err, "licence not found")
	}
	d := placeholder
	if ok {
		d = s.document(r).Public()
	}
	signed, err := s.o.Keys.Sign(d)
	if err != nil || !ok {
		return Signed{}, errors.Join(err, errNotFound)
	}
	return signed, nil
}

// MaxReasonChars bounds a revocation's reason.
const MaxReasonChars = 500

// Revoke revokes licence id for reason and writes license.revoked in the
// same statement, then removes its stamped copy from the media store (its
// file is no longer delivered: downloads answer license_revoked). A
// licence revoked before is a conflict, after removing a copy a failed
// revocation left; an unknown one not_found.
func (s *Service) Revoke(ctx context.Context, id, reason string) (Signed, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > MaxReasonChars || !utf8.ValidString(reason) {
		return Signed{}, apperr.InvalidField("reason", "reason must be 1 to %d characters", MaxReasonChars)
	}
	if !ValidID(id) {
		return Signed{}, errNotFound
	}
	rows, err := s.pool.Query(ctx, revokeSQL, id, reason, s.o.BaseURL+"/licenses/")
	if err != nil {
		return Signed{}, err
	}
	revoked, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return Signed{}, err
	}
	current, err := s.Show(ctx, id)
	if err != nil {
		return Signed{}, err
	}
	if s.o.Stamps != nil && s.o.Stamps.o.Media != nil {
		if _, err := s.o.Stamps.RemoveRevoked(ctx, id); err != nil {
			return current, fmt.Errorf("licence %s is revoked, its stamped copy not yet removed (revoke again to retry): %w", id, err)
		}
	}
	if len(revoked) == 0 {
		return current, apperr.New(apperr.Conflict, "licence %s was revoked before", id)
	}
	return current, nil
}
