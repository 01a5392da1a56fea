package config

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
)

// minSecretChars is the shortest shared secret or signing key accepted.
const minSecretChars = 32

// minSecretDistinct is the fewest different characters a secret may use: 32
// random base64 characters use about 25, so fewer than this is a typed
// pattern ("kkkk...", "abab..."), not a random value.
const minSecretDistinct = 10

// placeholderMarks are pieces of the example values in docs/,
// docker-compose.yml and deploy/k8s/secret.example.yaml and of the usual
// stand-ins, compared in lower case with only letters and digits kept. A
// secret copied from an example is public, whatever its length.
var placeholderMarks = []string{"changeme", "replaceme", "placeholder", "yoursecret", "example", "0123456789"}

// checkSecret refuses a secret that an attacker could guess: under
// minSecretChars, a known placeholder, or too few different characters.
// Empty is left to the caller (it means "not configured").
func checkSecret(name string, s Secret) error {
	v := s.Reveal()
	if v == "" {
		return nil
	}
	hint := "generate one with: head -c 32 /dev/urandom | base64"
	if len(v) < minSecretChars {
		return fmt.Errorf("%s must be at least %d characters; %s", name, minSecretChars, hint)
	}
	norm := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, v)
	for _, m := range placeholderMarks {
		if strings.Contains(norm, m) {
			return fmt.Errorf("%s is a placeholder (it contains %q), not a secret; %s", name, m, hint)
		}
	}
	distinct := map[rune]bool{}
	for _, r := range v {
		distinct[r] = true
	}
	if len(distinct) < minSecretDistinct {
		return fmt.Errorf("%s uses only %d different characters, not a random value; %s", name, len(distinct), hint)
	}
	return nil
}

// GenerateSecret returns a fresh secret that checkSecret accepts: 32 random
// bytes in base64, as docs/operations.md tells operators to make them. Test setups
// and benchmarks use it instead of typing one.
func GenerateSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
