package license

import (
	"crypto"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// keyInfo labels the HKDF derivation of a signing key from a secret, so
// that the same secret used elsewhere (BROLL_SIGNING_KEY signs download
// links when no licence key of its own is set) yields an unrelated key.
const keyInfo = "broll licence signing key (Ed25519) v1"

// Keyring signs licence documents with its current key and publishes the
// public keys of every key it was given, so that documents signed before a
// rotation keep verifying.
type Keyring struct {
	current ed25519.PrivateKey
	kid     string
	signer  jose.Signer
	jwks    []byte
	// now is the clock documents are signed by (their iat).
	now func() time.Time
}

// NewKeyring derives the Ed25519 keys from secrets (at least 32 characters
// each; config checks them): current signs, previous are only published.
func NewKeyring(current string, previous ...string) (*Keyring, error) {
	if current == "" {
		return nil, errors.New("license: no signing secret")
	}
	priv, err := derive(current)
	if err != nil {
		return nil, err
	}
	k := &Keyring{current: priv, now: time.Now}
	set := jose.JSONWebKeySet{}
	seen := map[string]bool{}
	for _, secret := range append([]string{current}, previous...) {
		if secret == "" {
			continue
		}
		p, err := derive(secret)
		if err != nil {
			return nil, err
		}
		jwk, err := publicJWK(p.Public().(ed25519.PublicKey))
		if err != nil {
			return nil, err
		}
		if k.kid == "" {
			k.kid = jwk.KeyID
		}
		if !seen[jwk.KeyID] {
			seen[jwk.KeyID] = true
			set.Keys = append(set.Keys, jwk)
		}
	}
	if k.jwks, err = json.Marshal(set); err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{}).WithType("JOSE").WithHeader("cty", "application/vnd.broll.license+json")
	k.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA,
		Key: jose.JSONWebKey{Key: priv, KeyID: k.kid, Algorithm: string(jose.EdDSA)}}, opts)
	if err != nil {
		return nil, fmt.Errorf("license: signer: %w", err)
	}
	return k, nil
}

func derive(secret string) (ed25519.PrivateKey, error) {
	seed, err := hkdf.Key(sha256.New, []byte(secret), nil, keyInfo, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("license: derive key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// publicJWK is pub as a JWK whose kid is its RFC 7638 thumbprint.
func publicJWK(pub ed25519.PublicKey) (jose.JSONWebKey, error) {
	jwk := jose.JSONWebKey{Key: pub, Algorithm: string(jose.EdDSA), Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return jose.JSONWebKey{}, fmt.Errorf("license: thumbprint: %w", err)
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	return jwk, nil
}

// KeyID is the kid of the signing key.
func (k *Keyring) KeyID() string { return k.kid }

// JWKS is the public key set, as served at the well-known URL.
func (k *Keyring) JWKS() []byte { return k.jwks }

// sign returns payload as a compact JWS (EdDSA, kid in the header).
func (k *Keyring) sign(payload []byte) (string, error) {
	obj, err := k.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("license: sign: %w", err)
	}
	return obj.CompactSerialize()
}
