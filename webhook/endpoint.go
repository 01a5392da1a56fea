package webhook

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/outbox"
)

// Limits of the endpoint resource.
const (
	// MaxEndpointsPerRootKey is the cap of one root key's endpoints,
	// enabled or not: each integration of an account has its own, so one
	// cannot take another's places; a revoked root key's count toward none.
	MaxEndpointsPerRootKey = 20
	maxURLLength           = 2000
	maxDescription         = 500
	// DefaultRotationOverlap is how long the old secret keeps signing after
	// a rotation when the caller names no other time.
	DefaultRotationOverlap = 24 * time.Hour
	maxRotationOverlap     = 7 * 24 * time.Hour
)

// Endpoint is a registered receiver of an account's events.
type Endpoint struct {
	ID             uuid.UUID
	URL            string
	Description    string
	Events         []string
	Enabled        bool
	FailingSince   *time.Time
	DisabledAt     *time.Time
	DisabledReason string
	CreatedAt      time.Time
	// RootKeyID is the root key that made and owns the endpoint, with its
	// label; RootRevoked says that key is revoked: the endpoint was
	// disabled with it, its secrets destroyed, and it cannot be enabled.
	RootKeyID    uuid.UUID
	RootKeyLabel string
	RootRevoked  bool
}

// CanEnable says whether the endpoint is off and may be turned back on:
// any disabled endpoint but one of a revoked root key.
func (e Endpoint) CanEnable() bool { return !e.Enabled && !e.RootRevoked }

// DisabledByOwners is the reason of an endpoint the account's owners
// turned off (Disable); the other reasons are an automatic disabling after
// failures and the revocation of its root key.
const DisabledByOwners = "disabled by the account's owners"

// CreatedEndpoint is a new endpoint with its secret, shown this once.
type CreatedEndpoint struct {
	Endpoint
	Secret string
}

// NewEndpoint is what a root key asks for.
type NewEndpoint struct {
	URL         string
	Events      []string
	Description string
}

// endpointRow reads a row of endpointColumns: an Endpoint, field by
// column name.
var endpointRow = pgx.RowToStructByName[Endpoint]

// checkURL accepts an https URL, or an http one to an allowed host, whose
// host is not a non-public address (unless allowed). Names are checked
// again, resolved, when dialled.
func (s *Service) checkURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > maxURLLength {
		return "", apperr.InvalidField("url", "url must be an https URL of at most %d characters", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return "", apperr.InvalidField("url", "url must be an absolute https URL without credentials or fragment")
	}
	host := u.Hostname()
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && (s.allow.name(host) || s.allow.addrLiteral(host)):
	default:
		return "", apperr.InvalidField("url", "url must use https (http only to hosts BROLL_WEBHOOK_ALLOW_HOSTS allows)")
	}
	if !s.allow.permits(host) {
		return "", apperr.InvalidField("url", "url names a loopback, private, link-local or otherwise non-public address; "+
			"webhooks are only sent to public addresses")
	}
	return u.String(), nil
}

func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, apperr.InvalidField("events", "events must name at least one event type").With("allowed_values", outbox.Types)
	}
	out := make([]string, 0, len(events))
	for _, e := range events {
		if !outbox.Known(e) {
			return nil, apperr.InvalidField("events", "unknown event type %q", e).With("allowed_values", outbox.Types)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Create registers an endpoint of o, a root key, with a new secret. The
// endpoint is that root key's: only it (and the account's owners) see it,
// and events about another root's keys never reach it.
func (s *Service) Create(ctx context.Context, o Owner, in NewEndpoint) (CreatedEndpoint, error) {
	if o.Key == uuid.Nil {
		return CreatedEndpoint{}, apperr.New(apperr.Forbidden, "a webhook endpoint is made by a root key, which owns it")
	}
	u, err := s.checkURL(in.URL)
	if err != nil {
		return CreatedEndpoint{}, err
	}
	events, err := checkEvents(in.Events)
	if err != nil {
		return CreatedEndpoint{}, err
	}
	desc := strings.TrimSpace(in.Description)
	if len([]rune(desc)) > maxDescription {
		return CreatedEndpoint{}, apperr.InvalidField("description", "description must be at most %d characters", maxDescription)
	}
	out := CreatedEndpoint{Secret: newSecret()}
	err = database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// A lock of the root key's endpoints serialises its concurrent
		// creations for its cap; the count is its own statement, after the
		// lock, so that it sees every creation committed while this one
		// waited (a count in the locking statement reads the snapshot taken
		// before the wait). The cap is the root key's, not the account's:
		// one integration cannot block another's.
		if _, err := tx.Exec(ctx, endpointsLockSQL, o.Key); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, endpointCountSQL, o.Key).Scan(&n); err != nil {
			return err
		}
		if n >= MaxEndpointsPerRootKey {
			return apperr.New(apperr.Conflict, "a root key has at most %d webhook endpoints and this one has %d; delete one of its endpoints first",
				MaxEndpointsPerRootKey, n)
		}
		// The key must be a live root key of the account: the foreign key
		// alone would accept any key.
		e, err := database.SelectOne(ctx, tx, endpointRow, insertEndpointSQL, o.Account, o.Key, u, desc, events)
		if err != nil {
			return database.Interpret(err, "root key not found")
		}
		out.Endpoint = e
		_, err = tx.Exec(ctx, insertSecretSQL, e.ID, sealSecret(s.sealer, e.ID, out.Secret))
		return err
	})
	if err != nil {
		return CreatedEndpoint{}, fmt.Errorf("create webhook: %w", err)
	}
	return out, nil
}

// List returns the owner's endpoints, oldest first.
func (s *Service) List(ctx context.Context, o Owner) ([]Endpoint, error) {
	out, err := database.Select(ctx, s.pool, endpointRow, endpointsSQL, o.Account, o.key())
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return out, nil
}

// Get returns one endpoint of the owner; another root key's, like another
// account's, is not_found.
func (s *Service) Get(ctx context.Context, o Owner, id uuid.UUID) (Endpoint, error) {
	e, err := database.SelectOne(ctx, s.pool, endpointRow, endpointSQL, o.Account, o.key(), id)
	return e, database.Interpret(err, "webhook endpoint not found")
}

// Delete removes an endpoint with its secrets, deliveries and log.
func (s *Service) Delete(ctx context.Context, o Owner, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, deleteEndpointSQL, o.Account, o.key(), id)
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.NotFoundf("webhook endpoint not found")
	}
	return nil
}

// Enable turns a disabled endpoint back on; its failure run starts afresh.
// Deliveries that gave up while it was disabled are not sent again. One of
// a revoked root key is a conflict: its secrets were destroyed with the
// key, and nobody could verify what it would be sent.
func (s *Service) Enable(ctx context.Context, o Owner, id uuid.UUID) (Endpoint, error) {
	e, err := database.SelectOne(ctx, s.pool, endpointRow, enableEndpointSQL, o.Account, o.key(), id)
	if database.NoRows(err) {
		cur, gerr := s.Get(ctx, o, id)
		if gerr != nil {
			return Endpoint{}, gerr
		}
		if cur.RootRevoked {
			return Endpoint{}, apperr.New(apperr.Conflict, "the endpoint's root key is revoked and its signing secret destroyed: "+
				"it cannot be enabled again; delete it, and register the URL again under a live root key")
		}
	}
	return e, database.Interpret(err, "webhook endpoint not found")
}

// Disable turns an endpoint off, as its owners decided: nothing is sent to
// it, and events written meanwhile are not queued for it, until it is
// enabled again. Disabling one already off changes nothing.
func (s *Service) Disable(ctx context.Context, o Owner, id uuid.UUID) (Endpoint, error) {
	e, err := database.SelectOne(ctx, s.pool, endpointRow, disableEndpointSQL, o.Account, o.key(), id, DisabledByOwners)
	return e, database.Interpret(err, "webhook endpoint not found")
}

// Rotated is the outcome of a secret rotation.
type Rotated struct {
	Secret         string
	OldExpiresAt   time.Time
	ActiveSecrets  int
	EndpointID     uuid.UUID
	RotationWindow time.Duration
}

// Rotate gives the endpoint a new secret; the ones it had keep signing for
// overlap (DefaultRotationOverlap when zero, 0 < overlap <= 7 days), so
// every delivery meanwhile carries a signature for each.
func (s *Service) Rotate(ctx context.Context, o Owner, id uuid.UUID, overlap time.Duration) (Rotated, error) {
	if overlap == 0 {
		overlap = DefaultRotationOverlap
	}
	if overlap < 0 || overlap > maxRotationOverlap {
		return Rotated{}, apperr.InvalidField("expire_in_seconds", "the old secret may keep signing for 0 to %d seconds",
			int(maxRotationOverlap.Seconds()))
	}
	out := Rotated{Secret: newSecret(), EndpointID: id, RotationWindow: overlap}
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var until time.Time
		err := tx.QueryRow(ctx, rotationEndSQL, o.Account, o.key(), id, overlap).Scan(&until)
		if err != nil {
			return database.Interpret(err, "webhook endpoint not found")
		}
		out.OldExpiresAt = until
		if _, err := tx.Exec(ctx, expireSecretsSQL, id, until); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, insertSecretSQL, id, sealSecret(s.sealer, id, out.Secret)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, activeSecretsSQL, id).Scan(&out.ActiveSecrets)
	})
	if err != nil {
		return Rotated{}, fmt.Errorf("rotate webhook secret: %w", err)
	}
	return out, nil
}

// Ping queues a ping event for this endpoint alone and returns its id.
func (s *Service) Ping(ctx context.Context, o Owner, id uuid.UUID) (string, error) {
	var evt string
	err := s.pool.QueryRow(ctx, pingSQL, o.Account, o.key(), id, outbox.Ping, outbox.Trace(ctx)).Scan(&evt)
	if err != nil {
		return "", database.Interpret(err, "webhook endpoint not found")
	}
	return evt, nil
}
