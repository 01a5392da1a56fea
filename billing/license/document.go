package license

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"broll/internal/money"
)

// Status is a licence's state.
type Status string

const (
	// Active: the licence holds.
	Active Status = "active"
	// Revoked: an operator withdrew it (brollctl license revoke).
	Revoked Status = "revoked"
)

// TermsType is the only licence type sold: one end user, no redistribution.
const TermsType = "single_user"

// Document is a licence as it is signed. The holder's view carries every
// field; the public view (Public) leaves out the price, the purchase and
// the revocation reason.
type Document struct {
	LicenseID     string     `json:"license_id"`
	Livemode      bool       `json:"livemode"`
	Status        Status     `json:"status"`
	RevokedAt     *time.Time `json:"revoked_at,omitempty"`
	RevokedReason string     `json:"revoked_reason,omitempty"`
	Clip          Clip       `json:"clip"`
	Licensee      Licensee   `json:"licensee"`
	Licensor      string     `json:"licensor"`
	Terms         Terms      `json:"terms"`
	GrantedAt     time.Time  `json:"granted_at"`
	// PricePaid is in dollars, as every amount at the edge; absent from the
	// public view.
	PricePaid  *Dollars `json:"price_paid,omitempty"`
	Currency   string   `json:"currency,omitempty"`
	PurchaseID string   `json:"purchase_id,omitempty"`
	VerifyURL  string   `json:"verify_url"`
	// IssuedAt is when the document was signed, in Unix seconds: the JWT
	// claim iat (RFC 7519), which JOSE libraries read. A document proves
	// the licence as of then; Keyring.Sign sets it.
	IssuedAt int64 `json:"iat"`
}

// Clip is the licensed clip.
type Clip struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Licensee is who holds the licence: the display name the platform set on
// the customer key (nil: none, shown as "a customer of <platform>") and the
// platform, the account's name (absent from the public view of a licensee
// with a name).
type Licensee struct {
	Name     *string `json:"name"`
	Platform string  `json:"platform,omitempty"`
}

// Terms are the licence's terms.
type Terms struct {
	Type           string `json:"type"`
	Redistribution bool   `json:"redistribution"`
	Version        string `json:"version"`
	URL            string `json:"url"`
}

// Dollars is an amount in cents written in dollars the way canonical JSON
// (RFC 8785) writes a number: 2.5, 12, 0.05.
type Dollars money.Cents

// MarshalJSON writes the shortest decimal of the amount.
func (d Dollars) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(d)/100, 'f', -1, 64), nil
}

// Valid reports whether the licence holds for real use: active and live.
// A test key's licence verifies, and says it is a test.
func (d Document) Valid() bool { return d.Status == Active && d.Livemode }

// Public is the document as the public verify page signs it: no price,
// purchase or reason, and the platform only when the licensee has no name
// of its own (it then reads "a customer of <platform>").
func (d Document) Public() Document {
	d.PricePaid, d.Currency, d.PurchaseID, d.RevokedReason = nil, "", "", ""
	if d.Licensee.Name != nil {
		d.Licensee.Platform = ""
	}
	return d
}

// DisplayLicensee is the licensee as a person reads it.
func (d Document) DisplayLicensee() string {
	if d.Licensee.Name != nil {
		return *d.Licensee.Name
	}
	return "a customer of " + d.Licensee.Platform
}

// SignedAt is when the document was signed (IssuedAt).
func (d Document) SignedAt() time.Time { return time.Unix(d.IssuedAt, 0).UTC() }

// ProofNote tells an offline verifier what a signed document proves: the
// licence as it stood when it was signed, not after; and where its current
// status is read.
func (d Document) ProofNote() string {
	return "Signed on " + d.SignedAt().Format("2 January 2006, 15:04:05 UTC") + " (iat " + strconv.FormatInt(d.IssuedAt, 10) +
		"): this certificate and its signed document prove the licence as of that time only. " +
		"Its current status is on the verify page; the same page answers with a freshly signed document " +
		"when asked with Accept: application/json."
}

// Canonical is the document's canonical JSON (RFC 8785): object keys in
// order, no white space, no HTML escaping. The bytes signed are these: one
// state of a licence signed in the same second always signs to the same
// JWS.
func (d Document) Canonical() ([]byte, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	// A map's keys are written in order; json.Number keeps each number's
	// text as Dollars wrote it.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Signed is a document with its signature.
type Signed struct {
	// Valid is the service's reading: the licence is active and live.
	Valid   bool     `json:"valid"`
	License Document `json:"license"`
	// JWS is the compact JWS whose payload is License's canonical JSON.
	JWS string `json:"jws"`
	// KeyID names the key that signed it in the JWKS.
	KeyID string `json:"key_id"`
}

// Sign signs d with the keyring's current key, as of now: the document's
// iat is the signing time.
func (k *Keyring) Sign(d Document) (Signed, error) {
	d.IssuedAt = k.now().Unix()
	payload, err := d.Canonical()
	if err != nil {
		return Signed{}, err
	}
	jws, err := k.sign(payload)
	if err != nil {
		return Signed{}, err
	}
	return Signed{Valid: d.Valid(), License: d, JWS: jws, KeyID: k.kid}, nil
}
