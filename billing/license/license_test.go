package license

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

const (
	secretA = "k4J9vQ2xW7mZp1Rt8Ys3Lc6Nd0Fh5Gb2"
	secretB = "Q8wE3rT6yU1iO4pA7sD0fG2hJ5kL9zX3"
)

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if !ValidID(id) || seen[id] {
			t.Fatalf("NewID gave %q (valid %v, seen before %v)", id, ValidID(id), seen[id])
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "lic_", "lic_0123456789abcdef0123456789abcde", "lic_0123456789abcdef0123456789abcdef0",
		"LIC_0123456789abcdef0123456789abcdef", "lic_0123456789ABCDEF0123456789abcdef", "lic_0123456789abcdef0123456789abcdeg",
		"lic_-", "../lic_0123456789abcdef0123456789abcd"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func sample() Document {
	name := "Jane <Doe> & Co"
	price := Dollars(250)
	return Document{LicenseID: "lic_0123456789abcdef0123456789abcdef", Livemode: true, Status: Active,
		Clip: Clip{ID: "7c0e1f4a-2b3c-4d5e-8f90-123456789abc", Title: "Shocked woman"}, Licensee: Licensee{Name: &name, Platform: "Acme"},
		Licensor: "B-roll Library", Terms: Terms{Type: TermsType, Version: "2026-11", URL: "https://x.test/licenses/terms"},
		GrantedAt: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), PricePaid: &price, Currency: "USD",
		PurchaseID: "0b7f6f7e-5e5d-4c4b-9a8a-111111111111", VerifyURL: "https://x.test/licenses/lic_0123456789abcdef0123456789abcdef",
		IssuedAt: time.Date(2026, 11, 27, 9, 30, 15, 0, time.UTC).Unix()}
}

// The signed bytes are canonical JSON: keys in order at every level, no
// white space, no HTML escaping, numbers as RFC 8785 writes them.
func TestCanonical(t *testing.T) {
	b, err := sample().Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"clip":{"id":"7c0e1f4a-2b3c-4d5e-8f90-123456789abc","title":"Shocked woman"},"currency":"USD",` +
		`"granted_at":"2026-11-26T10:00:00Z","iat":1795771815,"license_id":"lic_0123456789abcdef0123456789abcdef",` +
		`"licensee":{"name":"Jane <Doe> & Co","platform":"Acme"},"licensor":"B-roll Library","livemode":true,` +
		`"price_paid":2.5,"purchase_id":"0b7f6f7e-5e5d-4c4b-9a8a-111111111111","status":"active",` +
		`"terms":{"redistribution":false,"type":"single_user","url":"https://x.test/licenses/terms","version":"2026-11"},` +
		`"verify_url":"https://x.test/licenses/lic_0123456789abcdef0123456789abcdef"}`
	if string(b) != want {
		t.Fatalf("canonical JSON:\n got %s\nwant %s", b, want)
	}
	for cents, want := range map[Dollars]string{0: "0", 5: "0.05", 100: "1", 1999: "19.99", 123456789: "1234567.89"} {
		if got, _ := cents.MarshalJSON(); string(got) != want {
			t.Errorf("Dollars(%d) = %s, want %s", cents, got, want)
		}
	}
}

// The public view leaves out what only the holder may see.
func TestPublicView(t *testing.T) {
	d := sample()
	d.Status, d.RevokedReason = Revoked, "redistributed"
	b, _ := d.Public().Canonical()
	for _, private := range []string{"price_paid", "purchase_id", "currency", "redistributed", "Acme"} {
		if bytes.Contains(b, []byte(private)) {
			t.Errorf("public view holds %q: %s", private, b)
		}
	}
	d.Licensee.Name = nil
	if p := d.Public(); p.Licensee.Platform != "Acme" || p.DisplayLicensee() != "a customer of Acme" {
		t.Errorf("a licensee without a name: %+v, %q", p.Licensee, p.DisplayLicensee())
	}
}

// A document signed before a rotation verifies with the JWKS after it, by
// its kid; one signed after is signed by the new key. (The independent
// library's check is TestLicenseVerifiesWithNodeJose in package api.)
func TestSignAndRotate(t *testing.T) {
	before, err := NewKeyring(secretA)
	if err != nil {
		t.Fatal(err)
	}
	after, err := NewKeyring(secretB, secretA)
	if err != nil {
		t.Fatal(err)
	}
	if before.KeyID() == after.KeyID() {
		t.Fatal("rotation kept the key id")
	}
	// A fixed clock: the signing time is the document's iat.
	signedAt := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	before.now, after.now = func() time.Time { return signedAt }, func() time.Time { return signedAt }
	old, err := before.Sign(sample())
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := after.Sign(sample())
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(after.JWKS(), &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("JWKS after rotation: %s (%v)", after.JWKS(), err)
	}
	if !strings.Contains(string(after.JWKS()), `"kty":"OKP"`) || !strings.Contains(string(after.JWKS()), `"crv":"Ed25519"`) {
		t.Fatalf("JWKS: %s", after.JWKS())
	}
	for what, s := range map[string]Signed{"before": old, "after": fresh} {
		obj, err := jose.ParseSignedCompact(s.JWS, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			t.Fatal(err)
		}
		kid := obj.Signatures[0].Header.KeyID
		keys := set.Key(kid)
		if len(keys) != 1 || kid != s.KeyID {
			t.Fatalf("%s: kid %q not in the JWKS once (key_id %q)", what, kid, s.KeyID)
		}
		payload, err := obj.Verify(keys[0])
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		signed := sample()
		signed.IssuedAt = signedAt.Unix()
		if want, _ := signed.Canonical(); !bytes.Equal(payload, want) || s.License.IssuedAt != signed.IssuedAt {
			t.Fatalf("%s: payload %s, document %+v", what, payload, s.License)
		}
	}
	// Ed25519 is deterministic: one state of a licence signed at one time,
	// one signature.
	again, _ := after.Sign(sample())
	if again.JWS != fresh.JWS {
		t.Error("the same document signed twice differs")
	}
	// A changed payload does not verify.
	parts := strings.Split(fresh.JWS, ".")
	tampered := parts[0] + "." + strings.Replace(parts[1], parts[1][:4], "eyJ4", 1) + "." + parts[2]
	if obj, err := jose.ParseSignedCompact(tampered, []jose.SignatureAlgorithm{jose.EdDSA}); err == nil {
		if _, err := obj.Verify(set.Keys[0]); err == nil {
			t.Error("a tampered licence verifies")
		}
	}
}

func TestCertificateIsAPDF(t *testing.T) {
	k, _ := NewKeyring(secretA)
	s, err := k.Sign(sample())
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := Certificate(s, testFonts(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf, []byte("%%EOF")) {
		t.Fatalf("not a PDF: %q", pdf[:min(len(pdf), 20)])
	}
}
