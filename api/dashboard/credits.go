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
	Balance   money.Cents
	Ledger    billing.LedgerPage
	Pager     pager
}

// credits shows the ledger with the balance after each entry. Top-ups are
// an operator's action; the page says how to ask for one.
func (h *handler) credits(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	acct, err := h.Tenancy.GetAccount(ctx, sess.AccountID)
	if err != nil {
		return err
	}
	page := pageNumber(c.Query("page"))
	ledger, err := h.Billing.Ledger(ctx, sess.AccountID, false, ledgerPerPage, (page-1)*ledgerPerPage)
	if err != nil {
		return err
	}
	return h.show(c, http.StatusOK, "credits", view{
		Title: "Credits", Nav: "credits", Session: sess, Account: acct.Name,
		Data: creditsView{AccountID: acct.ID.String(), Balance: money.Cents(acct.BalanceCents), Ledger: ledger,
			Pager: newPager(Prefix+"/credits", url.Values{}, ledger.Total, ledgerPerPage, page)},
	})
}
