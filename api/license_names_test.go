package api

import (
	"strings"
	"testing"
)

// The public verify page shows the names others chose isolated (<bdi>):
// the licensee's and the clip's title, so that text reading right to left
// cannot reorder the page around it.
func TestVerifyPageIsolatesNames(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	f := newLicenseFixture(t, e)
	page := e.sendUnchecked(t, 0, "GET", "/licenses/"+licenseOf(t, f.namedLine).Id, nil, nil)
	if page.status != 200 || !strings.Contains(string(page.raw), "<bdi>Jane Doe Studio</bdi>") {
		t.Errorf("the licensee's name is not isolated: %d %s", page.status, page.raw)
	}
	anon := e.sendUnchecked(t, 0, "GET", "/licenses/"+licenseOf(t, f.anonLine).Id, nil, nil)
	if !strings.Contains(string(anon.raw), "<bdi>a customer of "+platformName+"</bdi>") {
		t.Errorf("the platform's name is not isolated: %s", anon.raw)
	}
}
