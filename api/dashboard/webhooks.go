package dashboard

import (
	"context"
	"net/http"
	"strings"

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

// webhooksView is the webhooks page: every endpoint of the account, and
// the cap each root key has.
type webhooksView struct {
	Endpoints  []webhookRow
	PerRootKey int
}

// webhookLogRows is how many attempts the page shows per endpoint.
const webhookLogRows = 5

// WebhooksPage lists every endpoint of the account, whichever root key
// made it: the account's owners see the whole account, as with purchases,
// and may disable, enable again or delete any endpoint. One disabled after
// 3 days of failures says so at the top, in place of an email nobody
// configured; one of a revoked root key says so on its card, with no way
// back on.
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
		if e.CanEnable() && e.DisabledReason != webhook.DisabledByOwners && notice == "" {
			notice = "A webhook endpoint was disabled: " + e.DisabledReason + ". Fix the receiver, then enable it below."
		}
	}
	return h.show(c, http.StatusOK, "webhooks", view{
		Title: "Webhooks", Nav: "webhooks", Session: sess, Notice: notice,
		Data: webhooksView{Endpoints: rows, PerRootKey: webhook.MaxEndpointsPerRootKey},
	})
}

// webhookAction is one change the account's owners make to an endpoint of
// the account, logged and answered with a redirect to the page and its
// notice.
func (h *Dashboard) webhookAction(c *fiber.Ctx, done string, change func(context.Context, webhook.Owner, uuid.UUID) error) error {
	sess := session(c)
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.NotFoundf("webhook endpoint not found")
	}
	if err := change(c.UserContext(), webhook.AccountOwners(sess.AccountID), id); err != nil {
		return err
	}
	h.Logger.Info("dashboard: "+done, "request_id", h.RequestID(c), "account_id", sess.AccountID,
		"user_id", sess.UserID, "webhook_id", id)
	return c.Redirect(Prefix+"/webhooks?m="+strings.ReplaceAll(done, " ", "-"), fiber.StatusSeeOther)
}

// EnableWebhook turns a disabled endpoint back on; one of a revoked root
// key is a conflict.
func (h *Dashboard) EnableWebhook(c *fiber.Ctx) error {
	return h.webhookAction(c, "webhook enabled", func(ctx context.Context, o webhook.Owner, id uuid.UUID) error {
		_, err := h.Webhooks.Enable(ctx, o, id)
		return err
	})
}

// DisableWebhook turns an endpoint off until it is enabled again.
func (h *Dashboard) DisableWebhook(c *fiber.Ctx) error {
	return h.webhookAction(c, "webhook disabled", func(ctx context.Context, o webhook.Owner, id uuid.UUID) error {
		_, err := h.Webhooks.Disable(ctx, o, id)
		return err
	})
}

// DeleteWebhook removes an endpoint with its secrets and delivery log.
func (h *Dashboard) DeleteWebhook(c *fiber.Ctx) error {
	return h.webhookAction(c, "webhook deleted", h.Webhooks.Delete)
}
