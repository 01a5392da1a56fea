// Package idempotency keeps the first response to each Idempotency-Key of
// an API key in Postgres for 24 hours, so that a retried request is
// answered from it instead of running twice. Answers are kept sealed (an
// answer may hold a new API key or signed download links) and at most
// MaxBody long.
//
// A request that runs holds its key's row (no status yet) and, on a
// connection of its own, a session advisory lock named after the key: the
// lock says the owner is alive. A node that crashed, or a primary that went
// away in a failover, takes its sessions and so its locks with it, and the
// next retry finds the row unlocked and runs the request at once instead of
// waiting for the row to go stale. Nobody runs without the lock: only its
// holder writes a new row or takes over an unfinished one. A row left
// unfinished past the stale time while its lock is still held (a session
// the server keeps for a client it cannot reach) is taken over by ending
// that session, which lets the lock go, and taking the lock.
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
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/apperr"
	"broll/internal/database"
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
	// over even though its owner's lock is still held: a session the
	// server keeps although its client is unreachable.
	stale time.Duration
	// owners bounds the connections that running claims hold, to half the
	// pool: the requests themselves need the rest.
	owners chan struct{}
	// begun counts Begin calls: every purgeEvery-th one also deletes a
	// batch of expired rows, so the table keeps itself small without a job.
	begun atomic.Uint64
}

const purgeEvery = 64

// StoreOptions tune a Store.
type StoreOptions struct {
	// Wait is how long a retry waits for the first request to finish
	// (BROLL_IDEMPOTENCY_WAIT).
	Wait time.Duration
	// Stale is how long a request may stay unfinished before it is
	// presumed dead and a retry takes it over.
	Stale time.Duration
}

// New returns a store that seals answers with sealer.
func New(pool *pgxpool.Pool, sealer *seal.Sealer, o StoreOptions) *Store {
	return &Store{pool: pool, sealer: sealer, wait: o.Wait, stale: o.Stale, owners: make(chan struct{}, max(1, pool.Config().MaxConns/2))}
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
// One of them must be called: the claim holds a pool connection.
type Claim struct {
	store *Store
	keyID uuid.UUID
	key   string
	hash  []byte
	// conn holds the key's advisory lock while the request runs (unless
	// locked is false: a stale row taken over while its lock was held).
	conn   *pgxpool.Conn
	locked bool
	// token is the row's created_at as this claim wrote it: an owner that
	// lost its claim to a retry settles nothing of the retry's.
	token time.Time
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
		claim, resp, err := s.try(ctx, keyID, key, hash)
		if err != nil || claim != nil || resp != nil {
			return claim, resp, err
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

// try is one attempt of Begin: a claim, or the stored response, or
// neither (the first request is still running).
func (s *Store) try(ctx context.Context, keyID uuid.UUID, key string, hash []byte) (*Claim, *Response, error) {
	claim, err := s.claim(ctx, keyID, key, hash)
	if err != nil || claim != nil {
		return claim, nil, err
	}
	var stored, body []byte
	var r Response
	var status *int
	err = s.pool.QueryRow(ctx, storedSQL, keyID, key).Scan(&stored, &status, &r.ContentType, &body)
	if database.NoRows(err) {
		return nil, nil, nil // released meanwhile: try again
	}
	if err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(stored, hash) {
		return nil, nil, apperr.New(apperr.IdempotencyKeyReused, "this Idempotency-Key was used with a different request; use a new key for a new request")
	}
	if status == nil {
		return nil, nil, nil
	}
	r.Status = *status
	r.Body, r.Kept = s.openBody(keyID, key, hash, body)
	return nil, &r, nil
}

// claim tries the key's lock on a connection of its own and, in the same
// statement, claims the row (claimSQL): with the lock a new row, an
// expired one or an unfinished one whose owner is gone; without it only a
// stale one. Nil, nil when the key is someone else's: the caller reads
// the row.
func (s *Store) claim(ctx context.Context, keyID uuid.UUID, key string, hash []byte) (*Claim, error) {
	select {
	case s.owners <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		<-s.owners
		return nil, err
	}
	c := &Claim{store: s, keyID: keyID, key: key, hash: hash, conn: conn}
	var token *time.Time
	err = conn.QueryRow(ctx, claimSQL, keyID, key, hash, TTL, s.stale).Scan(&c.locked, &token)
	if err == nil && token != nil {
		c.token = *token
		return c, nil
	}
	if err != nil {
		// The statement may have failed after it took the lock, which a
		// failed statement does not give back: done unlocks, or closes the
		// connection when there was nothing to unlock.
		c.locked = true
	}
	c.done(ctx)
	return nil, err
}

// done gives the claim's connection back, unlocked. A connection that
// cannot say it unlocked is closed instead, which frees its locks.
func (c *Claim) done(ctx context.Context) {
	if c.conn == nil {
		return
	}
	conn := c.conn
	c.conn = nil
	defer func() { <-c.store.owners }()
	if c.locked && !conn.Conn().IsClosed() {
		var unlocked bool
		if err := conn.QueryRow(ctx, unlockSQL, c.keyID, c.key).Scan(&unlocked); err != nil || !unlocked {
			_ = conn.Conn().Close(ctx)
		}
	}
	conn.Release()
}

// Finish stores the answer of the claimed request, sealed (one over
// MaxBody leaves its status only). Written on the claim's
// own connection; if that died (a failover), once more on whichever
// primary the pool reaches now, where the row is too (the standby was
// synchronous). Either way the lock is let go.
func (c *Claim) Finish(ctx context.Context, r Response) error {
	args := []any{c.keyID, c.key, c.hash, c.token, r.Status, r.ContentType, c.store.sealBody(c.keyID, c.key, c.hash, r.Body)}
	err := c.settle(ctx, finishSQL, args...)
	if err != nil && database.IsUnavailable(err) {
		_, err = c.store.pool.Exec(ctx, finishSQL, args...)
	}
	return err
}

// Release gives the key up: the next request with it runs anew. If the
// claim's connection died, so did its lock, and the row left behind is
// taken over by the next request at once.
func (c *Claim) Release(ctx context.Context) error {
	return c.settle(ctx, releaseSQL, c.keyID, c.key, c.hash, c.token)
}

// settle runs the statement that ends the claim on its connection and
// lets the lock go.
func (c *Claim) settle(ctx context.Context, sql string, args ...any) error {
	if c.conn == nil {
		return errors.New("idempotency claim already settled")
	}
	_, err := c.conn.Exec(ctx, sql, args...)
	c.done(ctx)
	return err
}

// purge deletes a batch of expired rows; a failure only leaves them for
// the next purge.
func (s *Store) purge(ctx context.Context) {
	_, _ = s.pool.Exec(ctx, purgeSQL, TTL)
}
