package tenancy

import (
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"strings"
)

const (
	keyPrefix      = "dsk_"
	keyBodyLen     = 43 // base62 digits needed for 256 random bits
	displayPrefix  = 12 // characters shown in listings: "dsk_" + 8
	base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// newKey returns a fresh key: "dsk_" and 256 random bits in base62.
func newKey() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	n := new(big.Int).SetBytes(b[:])
	base := big.NewInt(62)
	digits := make([]byte, keyBodyLen)
	mod := new(big.Int)
	for i := keyBodyLen - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		digits[i] = base62Alphabet[mod.Int64()]
	}
	return keyPrefix + string(digits)
}

// hashKey is what is stored and looked up. Keys carry 256 random bits, so a
// single SHA-256 is enough: there is nothing to brute-force.
func hashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// wellFormed rejects garbage before any lookup.
func wellFormed(key string) bool {
	if !strings.HasPrefix(key, keyPrefix) || len(key) != len(keyPrefix)+keyBodyLen {
		return false
	}
	for i := len(keyPrefix); i < len(key); i++ {
		if strings.IndexByte(base62Alphabet, key[i]) < 0 {
			return false
		}
	}
	return true
}
