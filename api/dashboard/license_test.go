package dashboard_test

import (
	"regexp"
	"strings"
	"testing"
)

var licenseLinkRe = regexp.MustCompile(`href="/dashboard/licenses/(lic_[0-9a-f]{32})\.pdf"`)

// The purchases page links each purchase's public verify page and its PDF
// certificate; the certificate is served to the account's users only.
func TestPurchasesPageLinksLicences(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Licence Co", 100000)
	other := e.tenant(t, "Other Co", 100000)
	e.buy(t, tn.Customer.Secret, e.videos(t, "easy", "Licensed clip")...)
	e.buy(t, other.Customer.Secret, e.videos(t, "easy", "Their clip")...)
	b := e.signedIn(t, tn)
	p := b.get(t, "/dashboard/purchases")
	m := licenseLinkRe.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || !strings.Contains(p.body, `href="/licenses/`+m[1]+`"`) {
		t.Fatalf("purchases page without licence links: %d %.3000s", p.status, p.body)
	}
	pdf := b.get(t, "/dashboard/licenses/"+m[1]+".pdf")
	if pdf.status != 200 || pdf.header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(pdf.body, "%PDF-") {
		t.Fatalf("certificate: %d %s", pdf.status, pdf.header)
	}
	theirs := licenseLinkRe.FindStringSubmatch(e.signedIn(t, other).get(t, "/dashboard/purchases").body)
	if len(theirs) < 2 || theirs[1] == m[1] {
		t.Fatalf("the other account's licence: %v", theirs)
	}
	if r := b.get(t, "/dashboard/licenses/"+theirs[1]+".pdf"); r.status != 404 {
		t.Errorf("another account's certificate: %d", r.status)
	}
}
