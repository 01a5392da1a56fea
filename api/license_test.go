package api

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// platformName is the account's name in the licence tests: spaces keep it
// from appearing by chance inside a JWS.
const platformName = "Northwind Media Platform"

var licenseIDPattern = regexp.MustCompile(`^lic_[0-9a-f]{32}$`)

// licenseFixture is an account with a customer key that has a licensee
// name, one that has none, a sibling root, and a clip each bought.
type licenseFixture struct {
	e                   *testEnv
	acct, other         billingtest.Account
	named, anon         brollclient.KeyCreated
	namedLine, anonLine brollclient.PurchaseLine
}

func newLicenseFixture(t *testing.T, e *testEnv) licenseFixture {
	t.Helper()
	f := licenseFixture{e: e}
	f.acct = billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Name: platformName, Credits: 100_000})
	f.other = f.acct.AnotherRoot(t, e.pool, "second integration")
	root := f.acct.RootKey.Secret
	f.named = expect[brollclient.KeyCreated](t, e.do(t, 0, "POST", "/api/v1/keys", root,
		map[string]any{"customer_label": "jane@example.com", "licensee_name": "Jane Doe Studio"}), 201)
	if f.named.Details.LicenseeName == nil || *f.named.Details.LicenseeName != "Jane Doe Studio" {
		t.Fatalf("key with a licensee name: %+v", f.named.Details)
	}
	f.anon = expect[brollclient.KeyCreated](t, e.do(t, 0, "POST", "/api/v1/keys", root, map[string]any{"customer_label": "anon@example.com"}), 201)
	vids := billingtest.Videos(t, e.pool, 2, "medium")
	f.namedLine = e.buy(t, 0, f.named.ApiKey, vids[0]).Purchases[0]
	f.anonLine = e.buy(t, 0, f.anon.ApiKey, vids[1]).Purchases[0]
	return f
}

func licenseOf(t *testing.T, line brollclient.PurchaseLine) brollclient.LicenseRef {
	t.Helper()
	if line.License == nil {
		t.Fatalf("purchase line without a licence: %+v", line)
	}
	return *line.License
}

// Every purchase carries its licence; the holder (the key or its root)
// reads the signed document, nobody else does; the public page shows only
// what anyone may see; the certificate is a PDF that poppler reads; a
// revoked licence says so everywhere and reaches the key's root's webhooks
// only.
func TestLicensesOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: loopbackHooks})
	f := newLicenseFixture(t, e)
	lic := licenseOf(t, f.namedLine)
	if !licenseIDPattern.MatchString(lic.Id) || lic.Status != "active" || lic.VerifyUrl != "http://api.test/licenses/"+lic.Id {
		t.Fatalf("licence on the purchase: %+v", lic)
	}
	if anon := licenseOf(t, f.anonLine); anon.Id == lic.Id {
		t.Fatal("two purchases share a licence")
	}
	again := e.buy(t, 0, f.named.ApiKey, f.namedLine.VideoId).Purchases[0]
	if !again.AlreadyOwned || licenseOf(t, again).Id != lic.Id {
		t.Fatalf("buying again: %+v", again)
	}
	path := "/api/v1/licenses/" + lic.Id

	t.Run("the holder reads the signed document", func(t *testing.T) {
		for who, key := range map[string]string{"the key": f.named.ApiKey, "its root": f.acct.RootKey.Secret} {
			s := expect[brollclient.SignedLicense](t, e.do(t, 0, "GET", path, key, nil), 200)
			d := s.License
			if !s.Valid || d.LicenseId != lic.Id || d.Status != "active" || !d.Livemode || d.Clip.Id != f.namedLine.VideoId ||
				d.Licensee.Name == nil || *d.Licensee.Name != "Jane Doe Studio" || d.Licensee.Platform == nil || *d.Licensee.Platform != platformName ||
				d.PricePaid == nil || fmt.Sprintf("%.2f", *d.PricePaid) != fmt.Sprintf("%.2f", f.namedLine.PricePaid) ||
				d.PurchaseId == nil || *d.PurchaseId != *f.namedLine.PurchaseId || d.Terms.Type != "single_user" || bool(d.Terms.Redistribution) ||
				d.VerifyUrl != lic.VerifyUrl || s.KeyId == "" || strings.Count(s.Jws, ".") != 2 {
				t.Errorf("%s: %+v", who, s)
			}
		}
		records := expect[brollclient.PurchaseList](t, e.do(t, 0, "GET", "/api/v1/broll/purchases", f.named.ApiKey, nil), 200)
		if len(records.Purchases) != 1 || records.Purchases[0].License == nil || records.Purchases[0].License.Id != lic.Id {
			t.Errorf("purchase records: %+v", records.Purchases)
		}
	})

	t.Run("anyone else gets 404, as for an unknown id", func(t *testing.T) {
		for who, key := range map[string]string{"a sibling customer key": f.anon.ApiKey, "another root key of the account": f.other.RootKey.Secret} {
			if r := e.do(t, 0, "GET", path, key, nil); r.status != 404 {
				t.Errorf("%s: %d %s", who, r.status, r.raw)
			}
			if r := e.do(t, 0, "GET", path+".pdf", key, nil); r.status != 404 {
				t.Errorf("%s, certificate: %d %s", who, r.status, r.raw)
			}
		}
		for _, id := range []string{"lic_00000000000000000000000000000000", "lic_nope", "x%27%20OR%201%3D1"} {
			if r := e.do(t, 0, "GET", "/api/v1/licenses/"+id, f.named.ApiKey, nil); r.status != 404 {
				t.Errorf("id %s: %d %s", id, r.status, r.raw)
			}
		}
	})

	t.Run("the public page shows nothing private", func(t *testing.T) {
		r := e.sendUnchecked(t, 0, "GET", "/licenses/"+lic.Id, nil, nil)
		page := string(r.raw)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("page: %d %s", r.status, page)
		}
		for _, want := range []string{"VALID", "Test clip", "Jane Doe Studio", lic.Id, "single user"} {
			if !strings.Contains(strings.ToLower(page), strings.ToLower(want)) {
				t.Errorf("the page lacks %q", want)
			}
		}
		price := fmt.Sprintf("%.2f", f.namedLine.PricePaid)
		for what, secret := range map[string]string{
			"the key's prefix": f.named.Details.KeyPrefix, "the root key's prefix": f.acct.RootKey.Prefix,
			"the price": price, "the account name": platformName, "the customer label": "jane@example.com",
			"the purchase id": f.namedLine.PurchaseId.String(), "another licence": licenseOf(t, f.anonLine).Id,
		} {
			if strings.Contains(page, secret) {
				t.Errorf("the page shows %s (%q)", what, secret)
			}
		}
		j := e.send(t, 0, "GET", "/licenses/"+lic.Id, map[string]string{"Accept": "application/json"}, nil)
		pub := decode[brollclient.SignedLicense](t, j)
		if j.status != 200 || !pub.Valid || pub.License.PricePaid != nil || pub.License.PurchaseId != nil || pub.License.Currency != nil ||
			pub.License.Licensee.Platform != nil || *pub.License.Licensee.Name != "Jane Doe Studio" {
			t.Errorf("public JSON: %d %s", j.status, j.raw)
		}
		if bytes.Contains(j.raw, []byte(price)) || bytes.Contains(j.raw, []byte(platformName)) {
			t.Errorf("public JSON shows the price or the account: %s", j.raw)
		}
		anon := e.sendUnchecked(t, 0, "GET", "/licenses/"+licenseOf(t, f.anonLine).Id, nil, nil)
		if !strings.Contains(string(anon.raw), "a customer of "+platformName) {
			t.Errorf("a licensee without a name: %s", anon.raw)
		}
		for _, id := range []string{"lic_00000000000000000000000000000000", "lic_x", "%3Cscript%3E"} {
			if r := e.sendUnchecked(t, 0, "GET", "/licenses/"+id, nil, nil); r.status != 404 || !strings.Contains(string(r.raw), "No such licence") {
				t.Errorf("page of %s: %d %s", id, r.status, r.raw)
			}
			if r := e.send(t, 0, "GET", "/licenses/"+id, map[string]string{"Accept": "application/json"}, nil); r.status != 404 {
				t.Errorf("JSON of %s: %d %s", id, r.status, r.raw)
			}
		}
	})

	t.Run("the certificate is a PDF poppler reads", func(t *testing.T) {
		r := e.do(t, 0, "GET", path+".pdf", f.named.ApiKey, nil)
		if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("certificate: %d %s", r.status, r.header)
		}
		cmd := exec.Command("pdftotext", "-layout", "-", "-")
		cmd.Stdin = bytes.NewReader(r.raw)
		text, err := cmd.Output()
		if err != nil {
			t.Fatalf("pdftotext: %v", err)
		}
		for _, want := range []string{lic.Id, "Jane Doe Studio", "Test clip", lic.VerifyUrl, "Single user"} {
			if !bytes.Contains(text, []byte(want)) {
				t.Errorf("the certificate's text lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("a revoked licence says so and reaches its root's webhooks only", func(t *testing.T) {
		rcvA, rcvB := newHookReceiver(t), newHookReceiver(t)
		for key, rcv := range map[string]*hookReceiver{f.acct.RootKey.Secret: rcvA, f.other.RootKey.Secret: rcvB} {
			w := expect[brollclient.WebhookCreated](t, e.do(t, 0, "POST", "/api/v1/webhooks", key,
				map[string]any{"url": rcv.URL, "events": []string{"license.revoked"}}), 201)
			rcv.setSecret(w.Secret)
		}
		runDeliverer(t, e)
		ctx := context.Background()
		revoked, err := e.ctl.Licenses.Revoke(ctx, lic.Id, "redistributed on a stock site")
		if err != nil || revoked.Valid || revoked.License.Status != "revoked" || revoked.License.RevokedReason != "redistributed on a stock site" {
			t.Fatalf("revoke: %+v, %v", revoked, err)
		}
		if _, err := e.ctl.Licenses.Revoke(ctx, lic.Id, "again"); err == nil {
			t.Error("a second revocation succeeded")
		}
		s := expect[brollclient.SignedLicense](t, e.do(t, 0, "GET", path, f.named.ApiKey, nil), 200)
		if s.Valid || s.License.Status != "revoked" || s.License.RevokedAt == nil {
			t.Errorf("holder's document after revocation: %+v", s)
		}
		pub := decode[brollclient.SignedLicense](t, e.send(t, 0, "GET", "/licenses/"+lic.Id, map[string]string{"Accept": "application/json"}, nil))
		if pub.Valid || pub.License.Status != "revoked" || pub.License.RevokedReason != nil {
			t.Errorf("public document after revocation: %+v", pub)
		}
		if page := e.sendUnchecked(t, 0, "GET", "/licenses/"+lic.Id, nil, nil); !strings.Contains(string(page.raw), "REVOKED") {
			t.Errorf("public page after revocation: %s", page.raw)
		}
		if l := licenseOf(t, e.buy(t, 0, f.named.ApiKey, f.namedLine.VideoId).Purchases[0]); l.Status != "revoked" {
			t.Errorf("the purchase answer after revocation: %+v", l)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if got, _ := rcvA.events(); len(got) > 0 {
				if len(got) != 1 || got[0].Type != "license.revoked" || got[0].Key != f.named.Details.Id.String() {
					t.Errorf("root A's receiver: %+v", got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("license.revoked never reached the key's root's endpoint")
			}
			time.Sleep(10 * time.Millisecond)
		}
		var pending int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
			WHERE w.root_key_id = $1`, f.other.RootKey.ID).Scan(&pending); err != nil || pending != 0 {
			t.Errorf("deliveries to the other root's endpoint: %d (%v)", pending, err)
		}
		if got, _ := rcvB.events(); len(got) != 0 {
			t.Errorf("the other root's receiver got %+v", got)
		}
	})

	t.Run("a test key's licence says test", func(t *testing.T) {
		tk := expect[brollclient.KeyCreated](t, e.do(t, 0, "POST", "/api/v1/keys", f.acct.RootKey.Secret,
			map[string]any{"customer_label": "sandbox", "mode": "test"}), 201)
		vid := billingtest.Videos(t, e.pool, 1, "easy")[0]
		tl := licenseOf(t, e.buy(t, 0, tk.ApiKey, vid).Purchases[0])
		s := expect[brollclient.SignedLicense](t, e.do(t, 0, "GET", "/api/v1/licenses/"+tl.Id, tk.ApiKey, nil), 200)
		if s.Valid || s.License.Livemode || s.License.Status != "active" {
			t.Errorf("test licence: %+v", s)
		}
		page := e.sendUnchecked(t, 0, "GET", "/licenses/"+tl.Id, nil, nil)
		if !strings.Contains(string(page.raw), "TEST LICENCE") || strings.Contains(string(page.raw), ">VALID<") {
			t.Errorf("test licence page: %s", page.raw)
		}
	})
}
