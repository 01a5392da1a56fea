package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
)

// The money pages show live data by default and test data under
// ?mode=test, each without the other's purchases, with a switch between
// them and a banner on the test side.
func TestLiveAndTestSideBySide(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	mine := e.tenant(t, "Mode Co", 10000)
	testKey := mine.TestKey(t, e.pool, "sandbox customer")
	vids := e.videos(t, "easy", "Live lighthouse clip", "Sandbox waterfall clip")
	e.buy(t, mine.Customer.Secret, vids[0])
	e.buy(t, testKey.Secret, vids[1])
	b := e.signedIn(t, mine)

	for _, c := range []struct {
		path      string
		want, not []string
	}{
		{"/dashboard/purchases", []string{"Live lighthouse clip", `href="/dashboard/purchases?mode=test"`}, []string{"Sandbox waterfall clip", "test-banner"}},
		{"/dashboard/purchases?mode=test", []string{"Sandbox waterfall clip", "test-banner", "/dashboard/purchases.csv?mode=test"}, []string{"Live lighthouse clip"}},
		{"/dashboard/purchases.csv", []string{"Live lighthouse clip"}, []string{"Sandbox waterfall clip"}},
		{"/dashboard/purchases.csv?mode=test", []string{"Sandbox waterfall clip"}, []string{"Live lighthouse clip"}},
		{"/dashboard/balance", []string{"$95.00", "Live lighthouse clip"}, []string{"Test balance", "Sandbox waterfall clip"}},
		{"/dashboard/balance?mode=test", []string{"Test balance", "$995.00", "Sandbox waterfall clip", "test-banner"}, []string{"Live lighthouse clip", "$95.00"}},
		{"/dashboard/", []string{"$95.00"}, []string{"$995.00", "test-banner"}},
	} {
		p := b.get(t, c.path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d", c.path, p.status)
		}
		for _, w := range c.want {
			if !strings.Contains(p.body, w) {
				t.Errorf("%s lacks %q", c.path, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(p.body, n) {
				t.Errorf("%s shows %q", c.path, n)
			}
		}
	}
	for _, path := range []string{"/dashboard/purchases?mode=sandbox", "/dashboard/balance?mode=TEST", "/dashboard/purchases.csv?mode=x"} {
		if p := b.get(t, path); p.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", path, p.status)
		}
	}
}
