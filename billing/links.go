package billing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"broll/internal/apperr"
)

// Link is a signed, expiring download link to a purchase's full-quality file.
type Link struct {
	URL       string
	ExpiresAt time.Time
}

// Signer makes and checks download links: an HMAC over the purchase id, the
// expiry and the signing key's version. Links carry no API key. During a key
// rotation the previous key still verifies the links it signed.
type Signer struct {
	baseURL  string
	ttl      time.Duration
	now      func() time.Time
	current  signingKey
	previous *signingKey
}

type signingKey struct {
	version string
	secret  []byte
}

func newSigningKey(secret string) signingKey {
	h := sha256.Sum256([]byte("broll-signing-key-version:" + secret))
	return signingKey{version: hex.EncodeToString(h[:4]), secret: []byte(secret)}
}

// SignerOptions tune a Signer.
type SignerOptions struct {
	// BaseURL is the public address of the API, which links start with.
	BaseURL string
	// TTL is how long a link works (BROLL_DOWNLOAD_URL_TTL).
	TTL time.Duration
	// Now is the clock links expire by; nil is time.Now.
	Now func() time.Time
}

// NewSigner returns a signer of links with the key current, and one that
// still verifies the links of the key previous (may be empty).
func NewSigner(current, previous string, o SignerOptions) *Signer {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	s := &Signer{baseURL: o.BaseURL, ttl: o.TTL, now: now, current: newSigningKey(current)}
	if previous != "" {
		p := newSigningKey(previous)
		s.previous = &p
	}
	return s
}

// DownloadPath is the route prefix links point at.
const DownloadPath = "/api/v1/downloads/"

func (k signingKey) sign(purchaseID uuid.UUID, exp int64) string {
	m := hmac.New(sha256.New, k.secret)
	fmt.Fprintf(m, "download|%s|%d|%s", purchaseID, exp, k.version)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Sign returns a fresh link for a purchase.
func (s *Signer) Sign(purchaseID uuid.UUID) Link {
	if s == nil {
		return Link{}
	}
	exp := s.now().Add(s.ttl).Truncate(time.Second)
	sig := s.current.sign(purchaseID, exp.Unix())
	return Link{
		URL: fmt.Sprintf("%s%s%s?exp=%d&kv=%s&sig=%s", s.baseURL, DownloadPath, purchaseID,
			exp.Unix(), s.current.version, sig),
		ExpiresAt: exp.UTC(),
	}
}

var errBadLink = apperr.New(apperr.Forbidden, "this download link is invalid or has expired; ask for a fresh one (repeat the purchase or list purchases)")

// Verify checks a link's parts in constant time; any defect is the same 403.
func (s *Signer) Verify(purchaseID, exp, version, sig string) (uuid.UUID, error) {
	id, err := uuid.Parse(purchaseID)
	if err != nil {
		return uuid.Nil, errBadLink
	}
	expUnix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return uuid.Nil, errBadLink
	}
	var key *signingKey
	switch {
	case version == s.current.version:
		key = &s.current
	case s.previous != nil && version == s.previous.version:
		key = s.previous
	default:
		return uuid.Nil, errBadLink
	}
	if !hmac.Equal([]byte(key.sign(id, expUnix)), []byte(sig)) || s.now().Unix() > expUnix {
		return uuid.Nil, errBadLink
	}
	return id, nil
}
