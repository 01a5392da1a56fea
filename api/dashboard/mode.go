package dashboard

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"broll/tenancy"
)

// modeSwitch is the live/test switch of the pages that show money (balance,
// purchases): ?mode=test shows the account's test data (test keys'
// purchases, the test balance and its ledger) under a banner that says so;
// live is the default, so a link without the parameter is never test data.
type modeSwitch struct {
	Test    bool
	LiveURL string
	TestURL string
}

// readMode reads ?mode= (live or test; anything else is a 400 naming it).
func readMode(c *fiber.Ctx) (bool, error) {
	if m := c.Query("mode"); m != "" {
		return tenancy.ParseKeyMode(m)
	}
	return false, nil
}

// modeOwner is the signed-in account as a page in the asked mode reads
// it (readMode): its owner, seeing its test keys' data when test.
func modeOwner(c *fiber.Ctx) (owner tenancy.Principal, test bool, err error) {
	if test, err = readMode(c); err != nil {
		return tenancy.Principal{}, false, err
	}
	owner = tenancy.AccountOwner(session(c).AccountID)
	owner.Test = test
	return owner, test, nil
}

// newModeSwitch links the page at path in both modes, keeping its filters
// (q without mode and page) but not its page number.
func newModeSwitch(path string, q url.Values, test bool) *modeSwitch {
	link := func(mode string) string {
		v := url.Values{}
		for k, vs := range q {
			if k != "mode" && k != "page" && len(vs) > 0 && vs[0] != "" {
				v.Set(k, vs[0])
			}
		}
		if mode == tenancy.ModeTest {
			v.Set("mode", mode)
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	return &modeSwitch{Test: test, LiveURL: link(tenancy.ModeLive), TestURL: link(tenancy.ModeTest)}
}

// modeValues adds mode=test to a page's query when it shows test data.
func modeValues(v url.Values, test bool) url.Values {
	if test {
		v.Set("mode", tenancy.ModeTest)
	}
	return v
}
