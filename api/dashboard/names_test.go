package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Names others chose are shown isolated (<bdi>), so that one reading right
// to left cannot reorder the page around it; a label with a bidirectional
// control is refused by the dashboard's form as by the API.
func TestNamesAreIsolated(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "منصة النور", 10000)
	b := e.signedIn(t, tn)

	keys := b.get(t, "/dashboard/keys")
	if !strings.Contains(keys.body, "<bdi>منصة النور</bdi>") {
		t.Errorf("the account's name is not isolated: %.3000s", keys.body)
	}
	p := b.post(t, "/dashboard/keys", "/dashboard/keys", url.Values{"label": {"סטודיו ראשי"}})
	if p.status != http.StatusCreated {
		t.Fatalf("create root key: %d %.500s", p.status, p.body)
	}
	if keys = b.get(t, "/dashboard/keys"); !strings.Contains(keys.body, "<bdi>סטודיו ראשי</bdi>") {
		t.Errorf("a key's label is not isolated: %.3000s", keys.body)
	}
	before := strings.Count(b.get(t, "/dashboard/keys").body, "/dashboard/keys/")
	if p := b.post(t, "/dashboard/keys", "/dashboard/keys", url.Values{"label": {"invoice\u202etxt.exe"}}); p.status != http.StatusBadRequest {
		t.Errorf("a label with an override: %d %.500s", p.status, p.body)
	}
	if after := strings.Count(b.get(t, "/dashboard/keys").body, "/dashboard/keys/"); after != before {
		t.Errorf("a refused label made a key: %d links before, %d after", before, after)
	}
}
