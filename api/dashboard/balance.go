package dashboard

import (
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/internal/money"
)

const ledgerPerPage = 50

type balanceView struct {
	AccountID string
	Test      bool
	Balance   money.Cents
	Ledger    billing.LedgerPage
	Pager     pager
}

// Balance shows the ledger with the balance after each entry. Top-ups are
// an operator's action; the page says how to ask for one. With ?mode=test
// it shows the test balance and its ledger instead.
func (h *Dashboard) Balance(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	test, err := readMode(c)
	if err != nil {
		return err
	}
	acct, err := h.Tenancy.GetAccount(ctx, sess.AccountID)
	if err != nil {
		return err
	}
	balance := money.Cents(acct.BalanceCents)
	if test {
		if balance, err = h.Billing.TestBalance(ctx, sess.AccountID); err != nil {
			return err
		}
	}
	page := pageNumber(c.Query("page"))
	ledger, err := h.Billing.Ledger(ctx, sess.AccountID, test, ledgerPerPage, (page-1)*ledgerPerPage)
	if err != nil {
		return err
	}
	return h.show(c, http.StatusOK, "balance", view{
		Title: "Balance", Nav: "balance", Session: sess, Account: acct.Name,
		Mode: newModeSwitch(Prefix+"/balance", url.Values{}, test),
		Data: balanceView{AccountID: acct.ID.String(), Test: test, Balance: balance, Ledger: ledger,
			Pager: newPager(Prefix+"/balance", modeValues(url.Values{}, test), ledger.Total, ledgerPerPage, page)},
	})
}

// BalanceMoved answers the page's former address, /dashboard/credits, so
// that bookmarks and sign-in links made before the page took the API's
// noun keep working; the query (?mode=test, ?page=) goes along.
func (h *Dashboard) BalanceMoved(c *fiber.Ctx) error {
	target := Prefix + "/balance"
	if q := string(c.Request().URI().QueryString()); q != "" {
		target += "?" + q
	}
	return c.Redirect(target, fiber.StatusMovedPermanently)
}
