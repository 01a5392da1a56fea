package dashboard

import (
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/internal/money"
)

const ledgerPerPage = 50

type creditsView struct {
	AccountID string
	Test      bool
	Balance   money.Cents
	Ledger    billing.LedgerPage
	Pager     pager
}

// Credits shows the ledger with the balance after each entry. Top-ups are
// an operator's action; the page says how to ask for one. With ?mode=test
// it shows the test balance and its ledger instead.
func (h *Dashboard) Credits(c *fiber.Ctx) error {
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
	return h.show(c, http.StatusOK, "credits", view{
		Title: "Credits", Nav: "credits", Session: sess, Account: acct.Name,
		Mode: newModeSwitch(Prefix+"/credits", url.Values{}, test),
		Data: creditsView{AccountID: acct.ID.String(), Test: test, Balance: balance, Ledger: ledger,
			Pager: newPager(Prefix+"/credits", modeValues(url.Values{}, test), ledger.Total, ledgerPerPage, page)},
	})
}
