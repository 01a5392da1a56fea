package tenancy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"broll/internal/apperr"
	"broll/internal/redisx"
)

// Session is a signed-in dashboard user. It lives in Redis under a hash of
// its token, so a copy of Redis signs nobody in, and carries the CSRF token
// that every form of the session must send back. That token is derived
// from the session token whenever the session is read, never stored, so a
// copy of Redis holds no token of any kind.
type Session struct {
	UserID    uuid.UUID `json:"user_id"`
	AccountID uuid.UUID `json:"account_id"`
	Email     string    `json:"email"`
	CSRFToken string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	LastSeen  time.Time `json:"last_seen"`
}

// SessionsOptions tune sessions and sign-in throttling; zero values take the
// defaults below.
type SessionsOptions struct {
	// IdleTimeout ends a session unused for this long; MaxAge ends any
	// session this long after sign-in, however busy.
	IdleTimeout time.Duration
	MaxAge      time.Duration
	// MaxFailures wrong passwords for one email in a row lock that email
	// out of sign-in for Lockout.
	MaxFailures int
	Lockout     time.Duration
	// Attempts allowed per email and per client address, failed or not.
	EmailAttempts   redis_rate.Limit
	AddressAttempts redis_rate.Limit
	// GlobalAttempts is the budget of all sign-ins, whoever makes them.
	GlobalAttempts redis_rate.Limit
	// Now is the clock; tests move it to expire sessions without waiting.
	Now func() time.Time
}

// Session defaults: a working day of idleness, a week at most; five wrong
// passwords lock an email for fifteen minutes.
const (
	DefaultSessionIdle    = 8 * time.Hour
	DefaultSessionMaxAge  = 7 * 24 * time.Hour
	DefaultSignInFailures = 5
	DefaultSignInLockout  = 15 * time.Minute
	// DefaultSignInGlobalPerMinute: ten sign-ins a second across the
	// service, far above what people signing in need.
	DefaultSignInGlobalPerMinute = 600
)

func (o *SessionsOptions) withDefaults() {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultSessionIdle
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultSessionMaxAge
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = DefaultSignInFailures
	}
	if o.Lockout <= 0 {
		o.Lockout = DefaultSignInLockout
	}
	if o.EmailAttempts.Rate <= 0 {
		o.EmailAttempts = redis_rate.Limit{Rate: 10, Burst: 10, Period: time.Minute}
	}
	if o.AddressAttempts.Rate <= 0 {
		o.AddressAttempts = redis_rate.Limit{Rate: 30, Burst: 30, Period: time.Minute}
	}
	if o.GlobalAttempts.Rate <= 0 {
		o.GlobalAttempts = redis_rate.PerMinute(DefaultSignInGlobalPerMinute)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Sessions signs dashboard users in and out and finds the session of a
// request. Everything lives in Redis, shared by all API nodes.
type Sessions struct {
	rdb     *redis.Client
	prefix  string
	users   *Service
	opts    SessionsOptions
	limiter *redis_rate.Limiter
}

// NewSessions returns the session store over Redis with the service's key
// prefix; users checks passwords.
func NewSessions(rdb *redis.Client, prefix string, users *Service, opts SessionsOptions) *Sessions {
	opts.withDefaults()
	return &Sessions{rdb: rdb, prefix: prefix, users: users, opts: opts, limiter: redisx.Limiter(rdb, prefix)}
}

// Options returns the effective options (defaults filled in).
func (s *Sessions) Options() SessionsOptions { return s.opts }

// ErrNoSession is the answer for a missing, unknown, ended or expired
// session token.
var ErrNoSession = apperr.New(apperr.Unauthorized, "your session has ended; sign in again")

func tokenHash(token string) string {
	h := sha256.Sum256([]byte("broll-dashboard-session:" + token))
	return hex.EncodeToString(h[:])
}

// csrfToken is the CSRF token of the session whose token this is: a hash
// under another label than tokenHash, so neither reveals the other or the
// session token.
func csrfToken(token string) string {
	h := sha256.Sum256([]byte("broll-dashboard-csrf:" + token))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

func (s *Sessions) sessionKey(hash string) string { return s.prefix + "dash:session:" + hash }

func (s *Sessions) userKey(id uuid.UUID) string {
	return s.prefix + "dash:user-sessions:" + id.String()
}

// RandomToken returns 256 random bits, URL-safe: session, CSRF and
// one-time link tokens.
func RandomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ttl is how long Redis keeps a session seen at lastSeen: until it idles
// out or reaches its maximum age, whichever comes first.
func (s *Sessions) ttl(sess Session, now time.Time) time.Duration {
	return min(s.opts.IdleTimeout, sess.CreatedAt.Add(s.opts.MaxAge).Sub(now))
}

// start opens a session for u and returns it with its token (the cookie
// value; only its hash is stored). It also drops the user's expired
// sessions from the user's index.
func (s *Sessions) start(ctx context.Context, u User) (Session, string, error) {
	now := s.opts.Now()
	token := RandomToken()
	sess := Session{UserID: u.ID, AccountID: u.AccountID, Email: u.Email, CSRFToken: csrfToken(token),
		CreatedAt: now.UTC(), LastSeen: now.UTC()}
	raw, err := json.Marshal(sess)
	if err != nil {
		return Session{}, "", err
	}
	hash := tokenHash(token)
	pipe := s.rdb.TxPipeline()
	pipe.Set(ctx, s.sessionKey(hash), raw, s.ttl(sess, now))
	pipe.SAdd(ctx, s.userKey(u.ID), hash)
	pipe.Expire(ctx, s.userKey(u.ID), s.opts.MaxAge)
	if _, err := pipe.Exec(ctx); err != nil {
		return Session{}, "", fmt.Errorf("start session: %w", err)
	}
	s.pruneIndex(ctx, u.ID)
	return sess, token, nil
}

// pruneIndex removes sessions that expired on their own from the user's
// index; best effort, the index only ever needs to be a superset.
func (s *Sessions) pruneIndex(ctx context.Context, userID uuid.UUID) {
	hashes, err := s.rdb.SMembers(ctx, s.userKey(userID)).Result()
	if err != nil || len(hashes) < 2 {
		return
	}
	pipe := s.rdb.Pipeline()
	exists := make([]*redis.IntCmd, len(hashes))
	for i, h := range hashes {
		exists[i] = pipe.Exists(ctx, s.sessionKey(h))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return
	}
	for i, h := range hashes {
		if exists[i].Val() == 0 {
			s.rdb.SRem(ctx, s.userKey(userID), h)
		}
	}
}

// touchEvery limits the writes a busy session makes: its idle clock is
// reset at most once a minute.
const touchEvery = time.Minute

// Lookup returns the live session of a token and keeps it alive. A token
// that is unknown, idle for too long or past its maximum age is ErrNoSession.
func (s *Sessions) Lookup(ctx context.Context, token string) (Session, error) {
	if token == "" || len(token) > 128 {
		return Session{}, ErrNoSession
	}
	hash := tokenHash(token)
	key := s.sessionKey(hash)
	raw, err := s.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, apperr.New(apperr.Unavailable, "sessions are unavailable right now; retry shortly")
	}
	var sess Session
	if err := json.Unmarshal(raw, &sess); err != nil {
		s.rdb.Del(ctx, key)
		return Session{}, ErrNoSession
	}
	sess.CSRFToken = csrfToken(token)
	now := s.opts.Now()
	if now.Sub(sess.CreatedAt) >= s.opts.MaxAge || now.Sub(sess.LastSeen) >= s.opts.IdleTimeout {
		s.rdb.Del(ctx, key)
		s.rdb.SRem(ctx, s.userKey(sess.UserID), hash)
		return Session{}, ErrNoSession
	}
	if now.Sub(sess.LastSeen) >= touchEvery {
		sess.LastSeen = now.UTC()
		if raw, err := json.Marshal(sess); err == nil {
			// XX: a session ended meanwhile (sign-out elsewhere) stays ended.
			s.rdb.SetArgs(ctx, key, raw, redis.SetArgs{Mode: "XX", TTL: s.ttl(sess, now)})
		}
	}
	return sess, nil
}

// End ends one session (signing out in this browser).
func (s *Sessions) End(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	hash := tokenHash(token)
	raw, err := s.rdb.GetDel(ctx, s.sessionKey(hash)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	var sess Session
	if json.Unmarshal(raw, &sess) == nil {
		s.rdb.SRem(ctx, s.userKey(sess.UserID), hash)
	}
	return nil
}

// endAll deletes every session in a user's index and the index itself, in
// one step, so that a session written before it is ended. A sign-in that
// verified a password a reset then replaced writes its session after this
// ran: it reads the hash again once its session exists and ends it
// (Sessions.SignIn).
var endAll = redis.NewScript(`
local hashes = redis.call('SMEMBERS', KEYS[1])
local n = 0
for _, h in ipairs(hashes) do
  n = n + redis.call('DEL', ARGV[1] .. h)
end
redis.call('DEL', KEYS[1])
return n
`)

// EndAll ends every session of a user: "sign out everywhere", and what a
// password change or reset does. It returns how many sessions were live.
func (s *Sessions) EndAll(ctx context.Context, userID uuid.UUID) (int, error) {
	n, err := endAll.Run(ctx, s.rdb, []string{s.userKey(userID)}, s.sessionKey("")).Int()
	if err != nil {
		return 0, fmt.Errorf("end sessions: %w", err)
	}
	return n, nil
}
