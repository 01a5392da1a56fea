package api

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"broll/billing/billingtest"
)

// signedAt reads a licence JWS as a JWT library does: its signature checked
// against the published JWKS (go-jose, the JOSE library beside npm's jose
// in TestLicenseVerifiesWithNodeJose), and the time it was signed, iat.
func signedAt(t *testing.T, jwks []byte, jws string) (time.Time, map[string]any) {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		t.Fatalf("JWKS: %v", err)
	}
	tok, err := jwt.ParseSigned(jws, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatalf("parse the licence as a JWT: %v", err)
	}
	if len(tok.Headers) != 1 {
		t.Fatalf("%d signatures", len(tok.Headers))
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %q is not in the JWKS", tok.Headers[0].KeyID)
	}
	var claims jwt.Claims
	var doc map[string]any
	if err := tok.Claims(keys[0].Key, &claims, &doc); err != nil {
		t.Fatalf("verify the licence: %v", err)
	}
	if claims.IssuedAt == nil {
		t.Fatalf("the licence carries no iat: %v", doc)
	}
	return claims.IssuedAt.Time(), doc
}

// Each signed licence says when it was signed (iat, the JWT claim any JOSE
// library reads), so that a saved one proves the licence as of that time
// only: after a revocation the saved JWS still verifies, its iat is before
// the revocation, and the verify page's JSON (and the purchase records, in
// bulk) carry the current status. The certificate says so too.
func TestLicenseSaysWhenItWasSigned(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	cust := acct.CustomerKey(t, e.pool, "saver")
	line := e.buy(t, 0, cust.Secret, billingtest.Videos(t, e.pool, 1, "easy")[0]).Purchases[0]
	id := licenseOf(t, line).Id
	jwks := e.sendUnchecked(t, 0, "GET", licenseKeysPath, nil, nil).raw

	// signedLicense is the envelope as far as this test reads it.
	type signedLicense struct {
		Valid   bool           `json:"valid"`
		License map[string]any `json:"license"`
		JWS     string         `json:"jws"`
	}
	read := func(r response) signedLicense {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("licence: %d %s", r.status, r.raw)
		}
		var s signedLicense
		if err := json.Unmarshal(r.raw, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	holder := func() signedLicense { return read(e.do(t, 0, "GET", "/api/v1/licenses/"+id, cust.Secret, nil)) }
	public := func() signedLicense {
		return read(e.send(t, 0, "GET", "/licenses/"+id, map[string]string{"Accept": "application/json"}, nil))
	}

	before := time.Now().Add(-time.Second).Truncate(time.Second)
	saved := holder()
	savedPublic := public()
	after := time.Now()
	for what, s := range map[string]signedLicense{"the holder's": saved, "the public": savedPublic} {
		at, doc := signedAt(t, jwks, s.JWS)
		if at.Before(before) || at.After(after) {
			t.Errorf("%s licence was signed at %s, asked between %s and %s", what, at, before, after)
		}
		if doc["status"] != "active" || doc["license_id"] != id {
			t.Errorf("%s payload: %v", what, doc)
		}
		// The envelope's document is the payload, iat included.
		if iat, ok := s.License["iat"].(float64); !ok || int64(iat) != at.Unix() {
			t.Errorf("%s envelope: iat %v, the JWS's %d", what, s.License["iat"], at.Unix())
		}
	}

	// Revoked: the saved JWS still verifies, and says as of when; the
	// current status is the verify page's JSON and the purchase records'.
	time.Sleep(1100 * time.Millisecond) // iat is in whole seconds
	if _, err := e.ctl.Licenses.Revoke(context.Background(), id, "charged back"); err != nil {
		t.Fatal(err)
	}
	savedAt, savedDoc := signedAt(t, jwks, saved.JWS)
	if savedDoc["status"] != "active" {
		t.Fatalf("the saved licence changed: %v", savedDoc)
	}
	now := public()
	nowAt, nowDoc := signedAt(t, jwks, now.JWS)
	if now.Valid || nowDoc["status"] != "revoked" || !nowAt.After(savedAt) {
		t.Errorf("the verify page's JSON after the revocation: valid %v, %v, signed at %s (the saved one %s)", now.Valid, nowDoc, nowAt, savedAt)
	}
	if revokedAt, err := time.Parse(time.RFC3339, nowDoc["revoked_at"].(string)); err != nil || !savedAt.Before(revokedAt.Add(time.Second)) || nowAt.Before(revokedAt) {
		t.Errorf("revoked at %v (%v); the saved licence signed at %s, the current one at %s", nowDoc["revoked_at"], err, savedAt, nowAt)
	}
	var records struct {
		Purchases []struct {
			License struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"license"`
		} `json:"purchases"`
	}
	if err := json.Unmarshal(e.do(t, 0, "GET", "/api/v1/broll/purchases", cust.Secret, nil).raw, &records); err != nil ||
		len(records.Purchases) != 1 || records.Purchases[0].License.ID != id || records.Purchases[0].License.Status != "revoked" {
		t.Errorf("purchase records after the revocation: %+v (%v)", records, err)
	}

	t.Run("the certificate says when it was signed and where the current status is", func(t *testing.T) {
		r := e.do(t, 0, "GET", "/api/v1/licenses/"+id+".pdf", cust.Secret, nil)
		if r.status != 200 {
			t.Fatalf("certificate: %d", r.status)
		}
		cmd := exec.Command("pdftotext", "-", "-")
		cmd.Stdin = bytes.NewReader(r.raw)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pdftotext: %v", err)
		}
		text := strings.Join(strings.Fields(string(out)), " ")
		signed := holder()
		at, _ := signedAt(t, jwks, signed.JWS)
		for _, want := range []string{"Signed", at.UTC().Format("2 January 2006"), "as of", "Accept: application/json"} {
			if !strings.Contains(text, want) {
				t.Errorf("the certificate lacks %q:\n%s", want, text)
			}
		}
	})
}
