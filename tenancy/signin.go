package tenancy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"broll/internal/apperr"
)

// SignIn checks an email and password and opens a session. Attempts are
// limited per email, per client address (an IPv6 client by its /64) and in
// total (GCRA, shared by all nodes), and
// MaxFailures wrong passwords in a row lock the email out for Lockout, the
// right password included, so that guessing a password takes years rather
// than hours. The limit holds however many attempts arrive at once: each
// takes its place in the count before its password is checked
// (reserveAttempt). Unknown emails are throttled and locked the same way, which
// keeps the answers from telling which emails have users.
func (s *Sessions) SignIn(ctx context.Context, email, password, clientAddr string) (Session, string, error) {
	norm := strings.ToLower(strings.TrimSpace(email))
	emailID := throttleID(norm)
	if err := s.allow(ctx, "address:"+AddressBucket(clientAddr), s.opts.AddressAttempts, "from this address"); err != nil {
		return Session{}, "", err
	}
	if err := s.allow(ctx, "email:"+emailID, s.opts.EmailAttempts, "for this email"); err != nil {
		return Session{}, "", err
	}
	// Last, so that attempts refused above do not spend it: beyond this
	// budget a flood from many addresses and emails gets 429 before any
	// password is hashed.
	if err := s.allow(ctx, "global", s.opts.GlobalAttempts, "on this service right now"); err != nil {
		return Session{}, "", err
	}
	if err := s.checkLock(ctx, emailID); err != nil {
		return Session{}, "", err
	}
	attempt, err := s.reserveAttempt(ctx, emailID)
	if err != nil {
		return Session{}, "", err
	}
	u, hash, err := s.users.checkCredentials(ctx, email, password)
	if apperr.CodeOf(err) == apperr.Unauthorized {
		if lockErr := s.recordFailure(ctx, emailID, attempt); lockErr != nil {
			return Session{}, "", lockErr
		}
		return Session{}, "", err
	}
	if err != nil {
		// Not an answer about the password (the hashing slots are busy,
		// the database is away): the attempt is given back.
		giveBack.Run(ctx, s.rdb, []string{s.failKey(emailID)})
		return Session{}, "", err
	}
	s.rdb.Del(ctx, s.failKey(emailID))
	sess, token, err := s.start(ctx, u)
	if err != nil {
		return Session{}, "", err
	}
	// A reset committed after the hash was read ends every session: ours
	// too if it is written by then; otherwise we see the new hash here.
	if same, err := s.users.passwordIs(ctx, u.ID, hash); err != nil || !same {
		_ = s.End(context.WithoutCancel(ctx), token)
		if err != nil {
			return Session{}, "", fmt.Errorf("sign in: %w", err)
		}
		return Session{}, "", errBadCredentials
	}
	if err := s.users.RecordSignIn(ctx, u.ID, s.opts.Now()); err != nil {
		return Session{}, "", fmt.Errorf("sign in: %w", err)
	}
	return sess, token, nil
}

// throttleID names an email in Redis keys without writing it there.
func throttleID(email string) string {
	h := sha256.Sum256([]byte("broll-signin:" + email))
	return hex.EncodeToString(h[:16])
}

func (s *Sessions) failKey(emailID string) string {
	return s.prefix + "dash:signin-failures:" + emailID
}
func (s *Sessions) lockKey(emailID string) string { return s.prefix + "dash:signin-locked:" + emailID }

var errSignInUnavailable = apperr.New(apperr.Unavailable, "sign-in is unavailable right now; retry shortly")

func (s *Sessions) allow(ctx context.Context, what string, limit redis_rate.Limit, who string) error {
	res, err := s.limiter.Allow(ctx, "dash:signin:"+what, limit)
	if err != nil {
		return errSignInUnavailable
	}
	if res.Allowed > 0 {
		return nil
	}
	retry := ceilSeconds(res.RetryAfter)
	return apperr.New(apperr.RateLimited, "too many sign-in attempts %s; try again in %d seconds", who, retry).
		With("retry_after_seconds", retry)
}

func (s *Sessions) checkLock(ctx context.Context, emailID string) error {
	ttl, err := s.rdb.PTTL(ctx, s.lockKey(emailID)).Result()
	if err != nil {
		return errSignInUnavailable
	}
	if ttl > 0 {
		return lockedError(ttl)
	}
	return nil
}

func lockedError(ttl time.Duration) error {
	retry := ceilSeconds(ttl)
	minutes := int(math.Ceil(ttl.Minutes()))
	return apperr.New(apperr.RateLimited,
		"too many failed sign-ins for this email: it is locked for %d minute(s); try again later or ask your operator for a password reset link", minutes).
		With("retry_after_seconds", retry)
}

// reserveAttempt counts an attempt before its password is checked, in one
// atomic step: the count is of failures and of checks still running, so
// that however many attempts arrive at once, at most MaxFailures passwords
// are checked before the lock; the attempts past them are answered as a
// lockout without a check. A success clears the count; a wrong password
// keeps its place as a failure. It returns the attempt's number.
func (s *Sessions) reserveAttempt(ctx context.Context, emailID string) (int64, error) {
	pipe := s.rdb.TxPipeline()
	n := pipe.Incr(ctx, s.failKey(emailID))
	pipe.ExpireNX(ctx, s.failKey(emailID), s.opts.Lockout)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, errSignInUnavailable
	}
	if n.Val() > int64(s.opts.MaxFailures) {
		return 0, lockedError(s.opts.Lockout)
	}
	return n.Val(), nil
}

// giveBack returns a reserved attempt, unless the count is gone meanwhile
// (a success cleared it, or a lock replaced it): a count made anew here
// would have no expiry.
var giveBack = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('DECR', KEYS[1])
end
return 0
`)

// recordFailure keeps a wrong password's attempt as a failure; the one
// that reaches the limit locks the email and is answered as a lockout.
func (s *Sessions) recordFailure(ctx context.Context, emailID string, attempt int64) error {
	if attempt < int64(s.opts.MaxFailures) {
		return nil
	}
	pipe := s.rdb.TxPipeline()
	pipe.Set(ctx, s.lockKey(emailID), "1", s.opts.Lockout)
	pipe.Del(ctx, s.failKey(emailID))
	if _, err := pipe.Exec(ctx); err != nil {
		return errSignInUnavailable
	}
	return lockedError(s.opts.Lockout)
}

// ceilSeconds rounds up, so that waiting the advertised time is enough.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
