package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestKeyLimitsForm: a customer key's spend and rate limits are set on its
// root key's page, shown there with what was spent, and cleared again; bad
// values are 400 and change nothing.
func TestKeyLimitsForm(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Limits Co", 10000)
	b := e.signedIn(t, tn)
	b.post(t, "/dashboard/keys", "/dashboard/keys", url.Values{"label": {"limits root"}})
	var rootID, custID string
	if err := e.pool.QueryRow(context.Background(), `SELECT id FROM api_keys WHERE label = 'limits root'`).Scan(&rootID); err != nil {
		t.Fatal(err)
	}
	b.post(t, "/dashboard/keys/"+rootID, "/dashboard/keys/"+rootID+"/customers", url.Values{"customer_label": {"capped customer"}})
	if err := e.pool.QueryRow(context.Background(), `SELECT id FROM api_keys WHERE label = 'capped customer'`).Scan(&custID); err != nil {
		t.Fatal(err)
	}
	page := "/dashboard/keys/" + rootID
	action := "/dashboard/keys/" + custID + "/limits"
	p := b.post(t, page, action, url.Values{"spend_amount": {"50"}, "spend_period": {"month"}, "rate_limit": {"120"}})
	if p.status != http.StatusSeeOther || p.location() != page+"?m=limits" {
		t.Fatalf("save limits: %d %q %.300s", p.status, p.location(), p.body)
	}
	shown := b.get(t, page+"?m=limits").body
	for _, want := range []string{"limits are saved", "$0.00 of $50.00 per month", "120/min"} {
		if !strings.Contains(shown, want) {
			t.Errorf("root key page lacks %q", want)
		}
	}
	for _, bad := range []url.Values{
		{"spend_amount": {"fifty"}, "spend_period": {"month"}},
		{"spend_amount": {"5"}, "spend_period": {"week"}},
		{"rate_limit": {"0"}},
		{"rate_limit": {"many"}},
	} {
		if p := b.post(t, page, action, bad); p.status != 400 {
			t.Errorf("limits %v: %d", bad, p.status)
		}
	}
	var cents *int64
	var rate *int
	if err := e.pool.QueryRow(context.Background(), `SELECT spend_limit_cents, rate_limit_per_minute FROM api_keys WHERE id = $1`,
		custID).Scan(&cents, &rate); err != nil || cents == nil || *cents != 5000 || rate == nil || *rate != 120 {
		t.Fatalf("stored limits changed by bad input: %v %v %v", cents, rate, err)
	}
	b.post(t, page, action, url.Values{"spend_amount": {""}, "rate_limit": {""}})
	if shown := b.get(t, page).body; !strings.Contains(shown, "no spend limit") || !strings.Contains(shown, "default rate") {
		t.Fatal("cleared limits are not shown as cleared")
	}
	// Another account's key cannot be changed from this one.
	other := e.tenant(t, "Other Co", 0)
	ob := e.signedIn(t, other)
	if p := ob.post(t, "/dashboard/keys", action, url.Values{"rate_limit": {"5"}}); p.status != 404 {
		t.Fatalf("another account's key: %d", p.status)
	}
}
