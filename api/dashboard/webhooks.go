package dashboard

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/webhook"
)

// webhookRow is one endpoint with its latest attempts.
type webhookRow struct {
	webhook.Endpoint
	Attempts []webhook.Attempt
}

// webhookLogRows is how many attempts the page shows per endpoint.
const webhookLogRows = 5

// WebhooksPage lists every endpoint of the account, whichever root key
// made it: the account's owners see the whole account, as with purchases. One disabled after 3 days of
// failures says so at the top, in place of an email nobody configured.
func (h *Dashboard) WebhooksPage(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	list, err := h.Webhooks.List(ctx, webhook.AccountOwners(sess.AccountID))
	if err != nil {
		return err
	}
	rows := make([]webhookRow, len(list))
	notice := notices[c.Query("m")]
	for i, e := range list {
		rows[i].Endpoint = e
		if rows[i].Attempts, err = h.Webhooks.Deliveries(ctx, webhook.AccountOwners(sess.AccountID), e.ID, webhookLogRows); err != nil {
			return err
		}
		if !e.Enabled && notice == "" {
			notice = "A webhook endpoint was disabled: " + e.DisabledReason + ". Fix the receiver, then enable it below."
		}
	}
	return h.show(c, http.StatusOK, "webhooks", view{
		Title: "Webhooks", Nav: "webhooks", Session: sess, Notice: notice, Data: rows,
	})
}

// EnableWebhook turns an automatically disabled endpoint back on.
func (h *Dashboard) EnableWebhook(c *fiber.Ctx) error {
	sess := session(c)
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.NotFoundf("webhook endpoint not found")
	}
	if _, err := h.Webhooks.Enable(c.UserContext(), webhook.AccountOwners(sess.AccountID), id); err != nil {
		return err
	}
	h.Logger.Info("dashboard: webhook enabled", "request_id", h.RequestID(c), "account_id", sess.AccountID,
		"user_id", sess.UserID, "webhook_id", id)
	return c.Redirect(Prefix+"/webhooks?m=webhook-enabled", fiber.StatusSeeOther)
}
