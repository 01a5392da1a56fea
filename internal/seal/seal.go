// Package seal keeps the secrets the service must use again (webhook signing
// secrets, the replay of a created API key) sealed at rest: AES-256-GCM under
// a key derived with HKDF-SHA256 from the server's BROLL_SIGNING_KEY, bound to
// what the secret is for, so a database dump alone reveals none of them.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// prefix marks a sealed value, so a reader can tell one from a plaintext
// value written before sealing existed.
const prefix = "sealed:v1:"

// ErrOpen is returned for a value no configured key opens (tampered, or
// sealed under a key that is no longer configured).
var ErrOpen = errors.New("seal: cannot open the sealed value")

// Sealer seals with the current server secret and opens with the current or
// the previous one, so BROLL_SIGNING_KEY can be rotated as download links are.
type Sealer struct {
	keys []cipher.AEAD // keys[0] seals; every key opens
}

// New derives the sealing keys from the server secrets; previous may be "".
func New(current, previous string) (*Sealer, error) {
	if current == "" {
		return nil, errors.New("seal: no server secret (BROLL_SIGNING_KEY)")
	}
	s := &Sealer{}
	for _, secret := range []string{current, previous} {
		if secret == "" {
			continue
		}
		key, err := hkdf.Key(sha256.New, []byte(secret), nil, "broll seal v1", 32)
		if err != nil {
			return nil, fmt.Errorf("seal: derive key: %w", err)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		s.keys = append(s.keys, aead)
	}
	return s, nil
}

// Seal returns plaintext sealed for purpose (for example "webhook-secret" or
// "idempotent-replay"); the same purpose must be given to Open, so a value
// sealed for one use cannot be opened as another.
func (s *Sealer) Seal(purpose string, plaintext []byte) string {
	aead := s.keys[0]
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	out := aead.Seal(nonce, nonce, plaintext, []byte(purpose))
	return prefix + base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the plaintext of a value Seal made for purpose.
func (s *Sealer) Open(purpose, sealed string) ([]byte, error) {
	raw, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return nil, ErrOpen
	}
	data, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, ErrOpen
	}
	for _, aead := range s.keys {
		n := aead.NonceSize()
		if len(data) < n+aead.Overhead() {
			return nil, ErrOpen
		}
		if plain, err := aead.Open(nil, data[:n], data[n:], []byte(purpose)); err == nil {
			return plain, nil
		}
	}
	return nil, ErrOpen
}

// IsSealed reports whether v is a value Seal made (rather than a plaintext
// value kept from before sealing).
func IsSealed(v string) bool { return strings.HasPrefix(v, prefix) }
