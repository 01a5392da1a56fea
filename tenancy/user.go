package tenancy

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
)

// User is a person who signs in to the account dashboard on behalf of one
// account. Users are created by an operator (brollctl user create), who hands
// them a one-time link to choose their password.
type User struct {
	ID            uuid.UUID
	AccountID     uuid.UUID
	Email         string
	PasswordSet   bool
	PasswordSetAt *time.Time
	LastSignInAt  *time.Time
	CreatedAt     time.Time
}

// PasswordLink is a one-time set-password token of a user. Token is the
// secret part of the link and exists only here: the database keeps its hash.
type PasswordLink struct {
	User      User
	Token     string
	ExpiresAt time.Time
}

// DefaultPasswordLinkTTL is how long a set-password link works.
const DefaultPasswordLinkTTL = 24 * time.Hour

// errBadCredentials is the one answer to a failed sign-in, whether the email
// is unknown, has no password yet or the password is wrong.
var errBadCredentials = apperr.New(apperr.Unauthorized, "wrong email or password")

// errBadLink is the one answer to a set-password token that is unknown,
// used or expired: which of them it is helps nobody but a guesser.
var errBadLink = apperr.NotFoundf("this link is not valid: it may have been used already or have expired; ask your operator for a new one")

// NormalizeEmail trims and lower-cases an email address and checks its shape
// (one @, something on both sides, no spaces, at most 254 characters).
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	local, domain, ok := strings.Cut(e, "@")
	bad := !ok || local == "" || domain == "" || strings.Contains(domain, "@") || len(e) > 254 ||
		strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") ||
		strings.IndexFunc(e, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
	if bad {
		return "", apperr.InvalidField("email", "%q is not an email address", apperr.Clip(email))
	}
	return e, nil
}

// userRow reads a row of userColumns: a User, field by column name.
var userRow = pgx.RowToStructByName[User]

// credentials is a user with its password hash (credentialsSQL); a user
// without a password has none.
type credentials struct {
	User
	PasswordHash *string
}

// newLinkToken returns a random token for a link (256 bits, URL-safe) and the
// hash that is stored.
func newLinkToken() (string, []byte) {
	tok := RandomToken()
	return tok, hashLinkToken(tok)
}

func hashLinkToken(tok string) []byte {
	h := sha256.Sum256([]byte("broll-password-link:" + tok))
	return h[:]
}

// issueLink retires the user's unused links and stores a new one.
func issueLink(ctx context.Context, tx pgx.Tx, u User, now time.Time, ttl time.Duration) (PasswordLink, error) {
	if _, err := tx.Exec(ctx, retireLinksSQL, u.ID, now); err != nil {
		return PasswordLink{}, err
	}
	tok, hash := newLinkToken()
	exp := now.Add(ttl).UTC().Truncate(time.Second)
	if _, err := tx.Exec(ctx, insertLinkSQL, hash, u.ID, now, exp); err != nil {
		return PasswordLink{}, err
	}
	return PasswordLink{User: u, Token: tok, ExpiresAt: exp}, nil
}

// CreateUser adds a dashboard user to an account and returns the one-time
// link with which they choose their password.
func (s *Service) CreateUser(ctx context.Context, accountID uuid.UUID, email string, now time.Time, ttl time.Duration) (PasswordLink, error) {
	return s.userLink(ctx, "create user", email, now, ttl, func(tx pgx.Tx, email string) (User, error) {
		u, err := database.SelectOne(ctx, tx, userRow, createUserSQL, accountID, email, now)
		if database.NoRows(err) {
			return u, apperr.NotFoundf("account not found")
		}
		if database.IsUniqueViolation(err, "") {
			return u, apperr.InvalidField("email", "a dashboard user with email %s exists already (brollctl user reset sends a new link)", email)
		}
		return u, err
	})
}

// ResetUser clears a user's password (it stops working at once) and returns a
// new one-time link; older links stop working too. The caller ends the
// user's sessions (Sessions.EndAll). When the commit cannot be confirmed
// (database.ErrCommitUnconfirmed) the link carries only its User, whose
// sessions the caller ends all the same: the reset may land a moment later.
func (s *Service) ResetUser(ctx context.Context, email string, now time.Time, ttl time.Duration) (PasswordLink, error) {
	return s.userLink(ctx, "reset user", email, now, ttl, func(tx pgx.Tx, email string) (User, error) {
		u, err := database.SelectOne(ctx, tx, userRow, resetUserSQL, email)
		return u, database.Interpret(err, "no dashboard user has this email")
	})
}

// userLink writes the user row (user, given the normalized email) and issues
// its one-time link in one transaction.
func (s *Service) userLink(ctx context.Context, op, email string, now time.Time, ttl time.Duration,
	user func(tx pgx.Tx, email string) (User, error)) (PasswordLink, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return PasswordLink{}, err
	}
	var out PasswordLink
	var who User
	err = database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		u, err := user(tx, email)
		if err != nil {
			return err
		}
		who = u
		out, err = issueLink(ctx, tx, u, now, ttl)
		return err
	})
	if errors.Is(err, database.ErrCommitUnconfirmed) {
		// No link to give, but the user it was for: a caller may act on
		// either outcome (ResetUser).
		return PasswordLink{User: who}, fmt.Errorf("%s: %w", op, err)
	}
	if err != nil {
		return PasswordLink{}, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// ListUsers lists an account's dashboard users, oldest first.
func (s *Service) ListUsers(ctx context.Context, accountID uuid.UUID) ([]User, error) {
	users, err := database.Select(ctx, s.pool, userRow, usersSQL, accountID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return users, nil
}

// PasswordLinkUser returns the user a set-password token belongs to while
// the link is valid, so that the form is only shown for a working link.
func (s *Service) PasswordLinkUser(ctx context.Context, token string, now time.Time) (User, error) {
	if token == "" {
		return User{}, errBadLink
	}
	u, err := database.SelectOne(ctx, s.pool, userRow, linkUserSQL, hashLinkToken(token), now)
	if database.NoRows(err) {
		return User{}, errBadLink
	}
	return u, err
}

// SetPassword spends a one-time token and sets the user's password. The
// token works once: a second use, or one after expiry, is not_found. The
// caller ends the user's other sessions (Sessions.EndAll).
func (s *Service) SetPassword(ctx context.Context, token, password string, now time.Time) (User, error) {
	if token == "" {
		return User{}, errBadLink
	}
	if err := CheckPassword(password); err != nil {
		return User{}, err
	}
	// Hash before the transaction: it takes tens of milliseconds.
	var hash string
	var err error
	if werr := s.hashing.run(ctx, func() { hash, err = HashPassword(password) }); werr != nil {
		return User{}, werr
	}
	if err != nil {
		return User{}, err
	}
	var u User
	err = database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var userID uuid.UUID
		err := tx.QueryRow(ctx, spendLinkSQL, hashLinkToken(token), now).Scan(&userID)
		if database.NoRows(err) {
			return errBadLink
		}
		if err != nil {
			return err
		}
		u, err = database.SelectOne(ctx, tx, userRow, setPasswordSQL, userID, hash, now)
		return err
	})
	if err != nil {
		return User{}, fmt.Errorf("set password: %w", err)
	}
	return u, nil
}

// dummyHash is verified against when a sign-in names no user with a
// password, so that such an answer takes as long as a wrong password and
// does not tell which emails have users.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$uFE6AumC/wRVqw0YKbwCyw$gFvPNuv08ExDb1DXDiLiZYHTbjogHZx1jPmv77k4VlE"

// CheckCredentials returns the user whose email and password these are, or
// unauthorized. Throttling is the caller's (Sessions.SignIn).
func (s *Service) CheckCredentials(ctx context.Context, email, password string) (User, error) {
	u, _, err := s.checkCredentials(ctx, email, password)
	return u, err
}

// passwordIs reports whether user id's password hash is still hash: a
// sign-in checks it once its session exists (Sessions.SignIn).
func (s *Service) passwordIs(ctx context.Context, id uuid.UUID, hash string) (bool, error) {
	var same bool
	err := s.pool.QueryRow(ctx, passwordIsSQL, id, hash).Scan(&same)
	if database.NoRows(err) {
		return false, nil
	}
	return same, err
}

// checkCredentials is CheckCredentials, also returning the password hash
// the password was verified against.
func (s *Service) checkCredentials(ctx context.Context, email, password string) (User, string, error) {
	email, err := NormalizeEmail(email)
	if err != nil || password == "" || len(password) > 4*MaxPasswordLength {
		return User{}, "", s.failSlowly(ctx, password)
	}
	c, err := database.SelectOne(ctx, s.pool, pgx.RowToStructByName[credentials], credentialsSQL, email)
	if err != nil && !database.NoRows(err) {
		return User{}, "", fmt.Errorf("check credentials: %w", err)
	}
	if c.PasswordHash == nil {
		return User{}, "", s.failSlowly(ctx, password)
	}
	u := c.User
	var ok bool
	if werr := s.hashing.run(ctx, func() { ok, err = VerifyPassword(*c.PasswordHash, password) }); werr != nil {
		return User{}, "", werr
	}
	if err != nil {
		return User{}, "", fmt.Errorf("check credentials: user %s: %w", u.ID, err)
	}
	if !ok {
		return User{}, "", errBadCredentials
	}
	return u, *c.PasswordHash, nil
}

// failSlowly verifies password against dummyHash, so that an answer for a
// user without a password takes as long as a wrong password, and refuses.
func (s *Service) failSlowly(ctx context.Context, password string) error {
	if err := s.hashing.run(ctx, func() { _, _ = VerifyPassword(dummyHash, password) }); err != nil {
		return err
	}
	return errBadCredentials
}

// RecordSignIn notes the time of a user's last sign-in.
func (s *Service) RecordSignIn(ctx context.Context, userID uuid.UUID, now time.Time) error {
	_, err := s.pool.Exec(ctx, recordSignInSQL, userID, now)
	return err
}
