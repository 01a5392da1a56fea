package api

import (
	"encoding/json"
	"strings"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// badNames are names that read other than they are stored, that show
// nothing, or that the certificate could not print, with the field each
// is given in.
var badNames = []struct{ field, value string }{
	{"licensee_name", "Acme\u202egnp.exe"},      // right-to-left override
	{"licensee_name", "\u202bAcme\u202c"},       // embedding and pop
	{"licensee_name", "Acme \u2066Films\u2069"}, // isolate
	{"licensee_name", "\u200b\u200b\u200b"},     // zero-width spaces only
	{"licensee_name", "\u200d\u2060\ufeff"},     // joiner, word joiner, BOM only
	{"licensee_name", " \u3000\u00a0 "},         // white space only
	{"licensee_name", "Acme \U0001F600"},        // no certificate font has the glyph
	{"customer_label", "invoice\u202etxt.exe"},
	{"customer_label", "\u200b\u200c"},
}

// A bad name is 400 invalid_request naming its field on POST and PATCH
// /api/v1/keys, and changes nothing: no key is made, the key patched keeps
// its names. A name in any script is stored in NFC.
func TestKeyNamesOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Name: "Names Platform", Credits: 1000})
	root := acct.RootKey.Secret
	key := expect[brollclient.KeyCreated](t, e.do(t, 0, "POST", "/api/v1/keys", root,
		map[string]any{"customer_label": "studio one", "licensee_name": "Before Studio"}), 201)
	keys := func() []brollclient.Key {
		return expect[brollclient.KeyList](t, e.do(t, 0, "GET", "/api/v1/keys", root, nil), 200).Keys
	}
	before := len(keys())

	refused := func(t *testing.T, r response, field string) {
		t.Helper()
		var p struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
			Field  string `json:"field"`
		}
		if err := json.Unmarshal(r.raw, &p); err != nil || r.status != 400 || p.Code != "invalid_request" || p.Field != field {
			t.Errorf("want 400 invalid_request naming %s: %d %s", field, r.status, r.raw)
		}
	}
	for _, bad := range badNames {
		t.Run(bad.field+" "+strings.ToValidUTF8(bad.value, "?"), func(t *testing.T) {
			body := map[string]any{"customer_label": "new key", bad.field: bad.value}
			refused(t, e.do(t, 0, "POST", "/api/v1/keys", root, body), bad.field)
			refused(t, e.do(t, 0, "PATCH", "/api/v1/keys?id="+key.Details.Id.String(), root, map[string]any{bad.field: bad.value}), bad.field)
		})
	}
	after := keys()
	if len(after) != before {
		t.Errorf("refused names made keys: %d before, %d after", before, len(after))
	}
	for _, k := range after {
		if k.Id == key.Details.Id && (k.CustomerLabel != "studio one" || k.LicenseeName == nil || *k.LicenseeName != "Before Studio") {
			t.Errorf("a refused PATCH changed the key: %q %v", k.CustomerLabel, k.LicenseeName)
		}
	}

	// "Zoe" with a combining diaeresis is stored composed (NFC), beside
	// Arabic and Japanese.
	r := e.do(t, 0, "PATCH", "/api/v1/keys?id="+key.Details.Id.String(), root,
		map[string]any{"licensee_name": "  Zoe\u0308 استوديو 映像 ", "customer_label": "\u212bngstr\u00f6m"})
	k := expect[struct {
		Success bool            `json:"success"`
		Key     brollclient.Key `json:"key"`
	}](t, r, 200).Key
	if k.LicenseeName == nil || *k.LicenseeName != "Zo\u00eb استوديو 映像" || k.CustomerLabel != "\u00c5ngstr\u00f6m" {
		t.Errorf("stored names: %v %q", k.LicenseeName, k.CustomerLabel)
	}
}
