package webhook

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/database"
	"broll/internal/seal"
)

// Signing secrets are kept sealed (internal/seal, under a key derived from
// BROLL_SIGNING_KEY): the worker must use them again to sign, so they
// cannot be hashed, and a dump of the database must not hand anyone the
// means to forge events. Each is sealed for its endpoint, so a sealed value
// copied to another endpoint's row does not open.

// sealPurpose binds a sealed secret to its endpoint.
func sealPurpose(endpoint uuid.UUID) string { return "webhook-secret:" + endpoint.String() }

// sealSecret is the stored form of an endpoint's new secret.
func sealSecret(s *seal.Sealer, endpoint uuid.UUID, secret string) string {
	return s.Seal(sealPurpose(endpoint), []byte(secret))
}

// openSecret returns the secret a stored value holds. A plaintext value,
// kept from before sealing until SealSecrets runs, is the secret itself.
func openSecret(s *seal.Sealer, endpoint uuid.UUID, stored string) (string, error) {
	if !seal.IsSealed(stored) {
		return stored, nil
	}
	plain, err := s.Open(sealPurpose(endpoint), stored)
	if err != nil {
		return "", fmt.Errorf("webhook secret of %s: %w", endpoint, err)
	}
	return string(plain), nil
}

// sealBatch bounds one transaction of SealSecrets.
const sealBatch = 500

// storedSecret is a webhook_secrets row as plaintextSecretsSQL reads it.
type storedSecret struct {
	ID         int64
	EndpointID uuid.UUID
	Secret     string
}

// SealSecrets seals every secret still stored in plaintext (written before
// secrets were sealed; a SQL migration cannot seal, as it has no server
// key) and returns how many it sealed. The worker runs it when it starts
// and then hourly, and `brollctl migrate` when it has BROLL_SIGNING_KEY, so
// no plaintext secret outlives the first start of an upgraded worker. It is
// safe to run anywhere at once: rows are taken with SKIP LOCKED.
func SealSecrets(ctx context.Context, pool *pgxpool.Pool, s *seal.Sealer) (int64, error) {
	var total int64
	for {
		var n int64
		err := database.InTx(ctx, pool, func(tx pgx.Tx) error {
			plain, err := database.Select(ctx, tx, pgx.RowToStructByName[storedSecret], plaintextSecretsSQL, sealBatch)
			if err != nil {
				return err
			}
			ids, sealed := make([]int64, len(plain)), make([]string, len(plain))
			for i, p := range plain {
				ids[i], sealed[i] = p.ID, sealSecret(s, p.EndpointID, p.Secret)
			}
			tag, err := tx.Exec(ctx, sealSecretsSQL, ids, sealed)
			n = tag.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("seal webhook secrets: %w", err)
		}
		total += n
		if n < sealBatch {
			return total, nil
		}
	}
}
