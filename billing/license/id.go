package license

import (
	"crypto/rand"
	"encoding/hex"
)

// idPrefix starts every licence id.
const idPrefix = "lic_"

// NewID returns a new licence id: lic_ and 128 random bits in hex. The
// migration that gave older purchases theirs makes the same shape from
// gen_random_uuid().
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return idPrefix + hex.EncodeToString(b[:])
}

// ValidID reports whether s has the shape of a licence id.
func ValidID(s string) bool {
	if len(s) != len(idPrefix)+32 || s[:len(idPrefix)] != idPrefix {
		return false
	}
	for _, c := range s[len(idPrefix):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
