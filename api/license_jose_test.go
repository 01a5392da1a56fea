package api

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
)

// joseVersion is the npm jose that checks licences in TestLicenseVerifiesWithNodeJose:
// a JOSE implementation other than the go-jose the service signs with.
const joseVersion = "6.2.18"

// verifyScript checks each compact JWS named on its command line against
// the JWKS file named first, and prints the protected header and payload of
// each; any failure exits non-zero.
const verifyScript = `import { readFileSync } from 'node:fs';
import { compactVerify, createLocalJWKSet } from 'jose';
const [jwksFile, ...files] = process.argv.slice(2);
const keys = createLocalJWKSet(JSON.parse(readFileSync(jwksFile, 'utf8')));
const out = [];
for (const f of files) {
  const { payload, protectedHeader } = await compactVerify(readFileSync(f, 'utf8').trim(), keys, { algorithms: ['EdDSA', 'Ed25519'] });
  out.push({ header: protectedHeader, payload: JSON.parse(new TextDecoder().decode(payload)) });
}
console.log(JSON.stringify(out));
`

// nodeJose installs jose from the npm registry into a folder of the test's
// own (once per test binary run) and returns the verify script's path.
func nodeJose(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true,"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	install := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", "jose@"+joseVersion)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install jose@%s: %v\n%s", joseVersion, err, out)
	}
	script := filepath.Join(dir, "verify.mjs")
	if err := os.WriteFile(script, []byte(verifyScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return script
}

type joseResult struct {
	Header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	} `json:"header"`
	Payload brollclient.LicenseDocument `json:"payload"`
}

// verifyWithNode runs the script over a JWKS and JWSs; ok false when node
// refused any of them.
func verifyWithNode(t *testing.T, script string, jwks []byte, jws ...string) ([]joseResult, bool) {
	t.Helper()
	dir := t.TempDir()
	args := []string{script, filepath.Join(dir, "jwks.json")}
	if err := os.WriteFile(args[1], jwks, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, s := range jws {
		f := filepath.Join(dir, "licence"+string(rune('a'+i))+".jws")
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	out, err := exec.Command("node", args...).Output()
	if err != nil {
		return nil, false
	}
	var res []joseResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("node's output: %v\n%s", err, out)
	}
	return res, true
}

// A purchase's licence verifies offline with the JWKS the service publishes,
// through npm's jose, before and after a key rotation: a licence signed by
// the old key still verifies against the new JWKS, a new one is signed by
// the new key, and a tampered one does not verify.
func TestLicenseVerifiesWithNodeJose(t *testing.T) {
	t.Parallel()
	script := nodeJose(t)
	oldKey, newKey := config.GenerateSecret(), config.GenerateSecret()
	e := setup(t, envOpts{configure: func(c *config.Config) { c.License.SigningKey = config.Secret(oldKey) }})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	cust := acct.CustomerKey(t, e.pool, "verifier")
	line := e.buy(t, 0, cust.Secret, billingtest.Videos(t, e.pool, 1, "easy")[0]).Purchases[0]
	id := licenseOf(t, line).Id
	before := expect[brollclient.SignedLicense](t, e.do(t, 0, "GET", "/api/v1/licenses/"+id, cust.Secret, nil), 200)
	publicBefore := decode[brollclient.SignedLicense](t, e.send(t, 0, "GET", "/licenses/"+id, map[string]string{"Accept": "application/json"}, nil))
	jwksBefore := e.sendUnchecked(t, 0, "GET", licenseKeysPath, nil, nil)
	if jwksBefore.status != 200 || !strings.Contains(string(jwksBefore.raw), `"crv":"Ed25519"`) {
		t.Fatalf("JWKS: %d %s", jwksBefore.status, jwksBefore.raw)
	}

	res, ok := verifyWithNode(t, script, jwksBefore.raw, before.Jws, publicBefore.Jws)
	if !ok || len(res) != 2 {
		t.Fatal("node's jose refused the licences")
	}
	for i, r := range res {
		// iat, the signing time, is read from the payload as signed.
		envelope := []brollclient.SignedLicense{before, publicBefore}[i]
		if r.Header.Alg != "EdDSA" || r.Header.Kid != before.KeyId || r.Payload.LicenseId != id || r.Payload.Status != "active" ||
			r.Payload.Iat != envelope.License.Iat || r.Payload.Iat < line.PurchasedAt.Unix() {
			t.Errorf("licence %d as jose read it: %+v", i, r)
		}
	}
	if res[0].Payload.PricePaid == nil || res[1].Payload.PricePaid != nil {
		t.Errorf("the holder's payload carries the price and the public one does not: %+v / %+v", res[0].Payload.PricePaid, res[1].Payload.PricePaid)
	}

	// The rotation: a node whose key is new and whose JWKS keeps the old one.
	rotated := e.cfg
	rotated.License.SigningKey, rotated.License.SigningKeysPrevious = config.Secret(newKey), config.Secret(oldKey)
	n := e.addNode(t, rotated, nil)
	after := expect[brollclient.SignedLicense](t, e.do(t, n, "GET", "/api/v1/licenses/"+id, cust.Secret, nil), 200)
	jwksAfter := e.sendUnchecked(t, n, "GET", licenseKeysPath, nil, nil)
	if after.KeyId == before.KeyId {
		t.Fatal("the rotated node signs with the old key")
	}
	res, ok = verifyWithNode(t, script, jwksAfter.raw, before.Jws, after.Jws)
	if !ok || len(res) != 2 || res[0].Header.Kid != before.KeyId || res[1].Header.Kid != after.KeyId || res[1].Payload.LicenseId != id {
		t.Fatalf("after the rotation: ok %v, %+v", ok, res)
	}
	// The new key is not in the old JWKS, and a changed payload fails.
	if _, ok := verifyWithNode(t, script, jwksBefore.raw, after.Jws); ok {
		t.Error("a licence signed by the new key verified against the old JWKS")
	}
	parts := strings.Split(before.Jws, ".")
	forged := strings.Replace(string(mustJSON(t, before.License)), `"status":"active"`, `"status":"revoked"`, 1)
	tampered := parts[0] + "." + b64url(forged) + "." + parts[2]
	if _, ok := verifyWithNode(t, script, jwksAfter.raw, tampered); ok {
		t.Error("a tampered licence verified")
	}
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
