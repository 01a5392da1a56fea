package tenancy

import (
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"strings"

	"broll/internal/apperr"
)

const (
	keyPrefix      = "dsk_"
	testKeyPrefix  = "dsk_test_" // test-mode keys: visibly not live money
	keyBodyLen     = 43          // base62 digits needed for 256 random bits
	displayDigits  = 8           // random digits shown in listings after the prefix
	base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// Key modes: a live key spends the account's pool, a test key its test
// balance (see billing).
const (
	ModeLive = "live"
	ModeTest = "test"
)

// ParseKeyMode reads a key's "mode": live or test.
func ParseKeyMode(mode string) (test bool, err error) {
	switch mode {
	case ModeLive:
		return false, nil
	case ModeTest:
		return true, nil
	}
	return false, apperr.InvalidField("mode", "mode must be live or test, got %q", apperr.Clip(mode)).
		With("allowed_values", []string{ModeLive, ModeTest})
}

// ModeName is the mode a key's Test flag stands for.
func ModeName(test bool) string {
	if test {
		return ModeTest
	}
	return ModeLive
}

// newKey returns a fresh key: "dsk_" (a test key "dsk_test_") and 256
// random bits in base62.
func newKey(test bool) string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails (Go 1.24+)
	n := new(big.Int).SetBytes(b[:])
	base := big.NewInt(62)
	digits := make([]byte, keyBodyLen)
	mod := new(big.Int)
	for i := keyBodyLen - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		digits[i] = base62Alphabet[mod.Int64()]
	}
	if test {
		return testKeyPrefix + string(digits)
	}
	return keyPrefix + string(digits)
}

// displayedPrefix is the part of a key that listings show: its prefix and
// a few random digits, so a test key reads as one at a glance.
func displayedPrefix(key string) string {
	return key[:len(key)-keyBodyLen+displayDigits]
}

// hashKey is what is stored and looked up. Keys carry 256 random bits, so a
// single SHA-256 is enough: there is nothing to brute-force.
func hashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// wellFormed rejects garbage before any lookup.
func wellFormed(key string) bool {
	body, ok := strings.CutPrefix(key, testKeyPrefix)
	if !ok {
		body, ok = strings.CutPrefix(key, keyPrefix)
	}
	// Trim leaves nothing exactly when every character is a base62 digit.
	return ok && len(body) == keyBodyLen && strings.Trim(body, base62Alphabet) == ""
}
