package tenancy

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/outbox"
)

// Revocation is what one revocation did.
type Revocation struct {
	Key     Key         // the key named, as revoked (the first revocation's time)
	Revoked []uuid.UUID // it and, for a root key, its customer keys
}

// errMarkersPending is returned when the rows are revoked but the markers
// could not be written: nodes may still accept the keys from their caches
// until a retry (revocation is idempotent) writes them.
var errMarkersPending = apperr.New(apperr.Unavailable, "key revoked in the database but not yet on every node; retry the request")

// errRevocationUnconfirmed is returned when the transaction revoking the
// keys may or may not have committed (its connection was lost while it
// committed): the keys are refused everywhere all the same, and a retry
// finishes the rows.
var errRevocationUnconfirmed = apperr.New(apperr.Unavailable,
	"the revocation could not be confirmed; the key is refused on every node, retry the request to finish it")

// Revoke revokes the key id within scope; a root key takes its customer
// keys with it. Revoking again keeps the first time and writes no second
// event, but writes the markers again, which is how a failed attempt is
// finished. A revocation whose commit's outcome is unknown writes the
// markers anyway and fails: it fails closed, since the commit may land a
// moment later, and nodes would otherwise accept the keys from their
// caches until those lapse.
func (c *KeyChanges) Revoke(ctx context.Context, scope KeyScope, id uuid.UUID) (Revocation, error) {
	rev, err := c.svc.revokeRows(ctx, scope, id)
	unconfirmed := errors.Is(err, database.ErrCommitUnconfirmed)
	if err != nil && !unconfirmed {
		return Revocation{}, err
	}
	// The commit may have landed whatever the caller does next.
	ctx = context.WithoutCancel(ctx)
	if err := admission.MarkRevoked(ctx, c.rdb, c.prefix, rev.Revoked...); err != nil {
		if unconfirmed {
			return Revocation{}, errRevocationUnconfirmed
		}
		return rev, fmt.Errorf("%w: %w", errMarkersPending, err)
	}
	if c.auth != nil {
		c.auth.Forget(rev.Revoked...)
	}
	if unconfirmed {
		return Revocation{}, errRevocationUnconfirmed
	}
	return rev, nil
}

// revokeRows marks the key (and a root key's customer keys) revoked and
// writes key.revoked for those this call revoked, in one transaction; a
// root key's webhook endpoints end in it too (the trigger of
// migrations/functions/webhook_root_revoked.sql on the key's row).
func (s *Service) revokeRows(ctx context.Context, scope KeyScope, id uuid.UUID) (Revocation, error) {
	var rev Revocation
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		k, err := scanKey(tx.QueryRow(ctx, revokeKeySQL, id, scope.AccountID, scope.ParentID))
		if err != nil {
			return database.Interpret(err, "key not found")
		}
		rev = Revocation{Key: k, Revoked: []uuid.UUID{k.ID}}
		if k.Kind == KindRoot {
			ids, err := database.Select(ctx, tx, pgx.RowTo[uuid.UUID], revokeCustomerKeysSQL, k.ID, k.RevokedAt)
			if err != nil {
				return err
			}
			rev.Revoked = append(rev.Revoked, ids...)
		}
		_, err = tx.Exec(ctx, keyRevokedEventsSQL, rev.Revoked, outbox.KeyRevoked, outbox.Trace(ctx))
		return err
	})
	if errors.Is(err, database.ErrCommitUnconfirmed) {
		return rev, err // what it would have revoked, for Revoke to refuse
	}
	if err != nil {
		return Revocation{}, err
	}
	return rev, nil
}
