// Package idempotency keeps the first response to each Idempotency-Key of
// an API key in Postgres for 24 hours, so that a retried request is
// answered from it instead of running twice. Answers are kept sealed (an
// answer may hold a new API key or signed download links) and at most
// MaxBody long.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/apperr"
	"broll/internal/seal"
)

// TTL is how long a key's response is kept (24 hours, as docs/api.md says).
const TTL = 24 * time.Hour

// Store holds the responses.
type Store struct {
	pool *pgxpool.Pool
	// sealer seals the kept answers.
	sealer *seal.Sealer
	// wait is how long a retry waits for the first request to finish
	// before it is told to come back (InUse).
	wait time.Duration
	// stale is how long a row may stay unfinished before a retry takes it
	// over: its node died before it could answer or clean up.
	stale time.Duration
	// begun counts Begin calls: every purgeEvery-th one also deletes a
	// batch of expired rows, so the table keeps itself small without a job.
	begun atomic.Uint64
}

const purgeEvery = 64

// New returns a store that seals answers with sealer: retries wait up to
// wait for the first request, and a request unfinished after stale is
// presumed dead.
func New(pool *pgxpool.Pool, sealer *seal.Sealer, wait, stale time.Duration) *Store {
	return &Store{pool: pool, sealer: sealer, wait: wait, stale: stale}
}

// Response is a stored answer. Kept is false when the first request
// finished with Status but its answer was not kept (see MaxBody): it must
// not run again, and cannot be replayed either.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
	Kept        bool
}

// Claim is the right to run the request for a key: Finish stores its
// answer, Release gives the key up (an answer that must not be replayed).
type Claim struct {
	store *Store
	keyID uuid.UUID
	key   string
	hash  []byte
}

// Hash names a request: its method, path and body.
func Hash(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)
}

// Valid reports whether k is an acceptable Idempotency-Key: 1 to 255
// printable ASCII characters.
func Valid(k string) bool {
	return len(k) >= 1 && len(k) <= 255 &&
		!strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 || r > 0x7e })
}

// Begin claims key for the request named hash, or returns the stored
// response of the first request with it. It waits for a first request
// still running; past the wait it is InUse. A key used with another
// request is Reused. An expired row, or one left unfinished too long, is
// taken over.
func (s *Store) Begin(ctx context.Context, keyID uuid.UUID, key string, hash []byte) (*Claim, *Response, error) {
	if s.begun.Add(1)%purgeEvery == 0 {
		s.purge(ctx)
	}
	deadline := time.Now().Add(s.wait)
	pause := 20 * time.Millisecond
	for {
		claimed, resp, err := s.try(ctx, keyID, key, hash)
		if err != nil || claimed || resp != nil {
			if claimed {
				return &Claim{store: s, keyID: keyID, key: key, hash: hash}, nil, nil
			}
			return nil, resp, err
		}
		if time.Now().After(deadline) {
			return nil, nil, apperr.New(apperr.IdempotencyKeyInUse, "a request with this Idempotency-Key is still running; retry it shortly")
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// try is one attempt of Begin: claimed, or the stored response, or
// neither (the first request is still running).
func (s *Store) try(ctx context.Context, keyID uuid.UUID, key string, hash []byte) (bool, *Response, error) {
	var inserted bool
	err := s.pool.QueryRow(ctx, `
		INSERT INTO idempotency_keys AS i (api_key_id, idem_key, request_hash) VALUES ($1, $2, $3)
		ON CONFLICT (api_key_id, idem_key) DO UPDATE
		SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, body = NULL, created_at = now()
		WHERE i.created_at < now() - $4::interval OR (i.status IS NULL AND i.created_at < now() - $5::interval)
		RETURNING true`, keyID, key, hash, TTL, s.stale).Scan(&inserted)
	if err == nil {
		return true, nil, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return false, nil, err
	}
	var stored, body []byte
	var r Response
	var status *int
	err = s.pool.QueryRow(ctx, `SELECT request_hash, status, coalesce(content_type, ''), body FROM idempotency_keys
		WHERE api_key_id = $1 AND idem_key = $2`, keyID, key).Scan(&stored, &status, &r.ContentType, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil, nil // released meanwhile: try again
	}
	if err != nil {
		return false, nil, err
	}
	if !bytes.Equal(stored, hash) {
		return false, nil, apperr.New(apperr.IdempotencyKeyReused, "this Idempotency-Key was used with a different request; use a new key for a new request")
	}
	if status == nil {
		return false, nil, nil
	}
	r.Status = *status
	r.Body, r.Kept = s.openBody(keyID, key, hash, body)
	return false, &r, nil
}

// Finish stores the answer of the claimed request, sealed; one over
// MaxBody leaves its status only.
func (c *Claim) Finish(ctx context.Context, r Response) error {
	_, err := c.store.pool.Exec(ctx, `UPDATE idempotency_keys SET status = $4, content_type = $5, body = $6
		WHERE api_key_id = $1 AND idem_key = $2 AND request_hash = $3 AND status IS NULL`,
		c.keyID, c.key, c.hash, r.Status, r.ContentType, c.store.sealBody(c.keyID, c.key, c.hash, r.Body))
	return err
}

// Release gives the key up: the next request with it runs anew.
func (c *Claim) Release(ctx context.Context) error {
	_, err := c.store.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE api_key_id = $1 AND idem_key = $2 AND request_hash = $3 AND status IS NULL`, c.keyID, c.key, c.hash)
	return err
}

// purge deletes a batch of expired rows; a failure only leaves them for
// the next purge.
func (s *Store) purge(ctx context.Context) {
	_, _ = s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
		SELECT ctid FROM idempotency_keys WHERE created_at < now() - $1::interval LIMIT 1000))`, TTL)
}
