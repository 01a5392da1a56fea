package tenancy

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"broll/internal/apperr"
)

// Argon2id parameters of new hashes: OWASP's minimum for argon2id (19 MiB,
// two passes, one lane), which keeps a sign-in cheap enough for a small
// node. They are written into each hash, so raising them later leaves older
// hashes verifiable.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonSaltLen   = 16
	argonKeyLen    = 32
)

// Password rules: long enough to resist guessing past the sign-in lockout,
// bounded so that nobody makes the server hash megabytes.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 256
)

// CheckPassword applies the password rules.
func CheckPassword(password string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case !utf8.ValidString(password):
		return apperr.InvalidField("password", "the password must be valid UTF-8")
	case n < MinPasswordLength:
		return apperr.InvalidField("password", "the password must have at least %d characters", MinPasswordLength)
	case n > MaxPasswordLength:
		return apperr.InvalidField("password", "the password must have at most %d characters", MaxPasswordLength)
	case strings.TrimSpace(password) == "":
		return apperr.InvalidField("password", "the password must not be blank")
	}
	return nil
}

// HashPassword returns the PHC string of an argon2id hash of password with a
// fresh random salt: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt) // crypto/rand never fails (Go 1.24+)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// b64 is the PHC string format's base64: standard alphabet, no padding.
var b64 = base64.RawStdEncoding

var errBadHash = errors.New("not an argon2id PHC string")

// VerifyPassword reports whether password matches the PHC string encoded,
// with the parameters the hash was made with, comparing in constant time.
func VerifyPassword(encoded, password string) (bool, error) {
	p, salt, want, err := parsePHC(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.time, p.memory, p.threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

type argonParams struct {
	memory  uint32
	time    uint32
	threads uint8
}

func parsePHC(encoded string) (argonParams, []byte, []byte, error) {
	var p argonParams
	parts := strings.Split(encoded, "$")
	// "", "argon2id", "v=19", "m=...,t=...,p=...", salt, hash
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, nil, nil, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return p, nil, nil, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return p, nil, nil, errBadHash
	}
	// Bounds keep a tampered row from making one sign-in cost gigabytes.
	if p.memory < 8 || p.memory > 1<<20 || p.time < 1 || p.time > 16 || p.threads < 1 {
		return p, nil, nil, errBadHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return p, nil, nil, errBadHash
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, errBadHash
	}
	return p, salt, key, nil
}
