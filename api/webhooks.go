package api

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/paging"
	"broll/webhook"
)

type webhookJSON struct {
	ID             uuid.UUID  `json:"id"`
	URL            string     `json:"url"`
	Description    string     `json:"description"`
	Events         []string   `json:"events"`
	Enabled        bool       `json:"enabled"`
	FailingSince   *time.Time `json:"failing_since"`
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason *string    `json:"disabled_reason"`
	CreatedAt      time.Time  `json:"created_at"`
}

func renderWebhook(e webhook.Endpoint) webhookJSON {
	out := webhookJSON{ID: e.ID, URL: e.URL, Description: e.Description, Events: e.Events, Enabled: e.Enabled,
		FailingSince: e.FailingSince, DisabledAt: e.DisabledAt, CreatedAt: e.CreatedAt}
	if e.DisabledReason != "" {
		out.DisabledReason = &e.DisabledReason
	}
	return out
}

// webhookOwner is the root key of the request: the routes are the root
// key's, and it manages only its own endpoints.
func webhookOwner(c *fiber.Ctx) webhook.Owner {
	p := principal(c)
	return webhook.RootKey(p.AccountID, p.KeyID)
}

func webhookID(raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, apperr.InvalidField("id", "id must be a webhook endpoint id (a UUID)")
	}
	return id, nil
}

func (s *webhooksAPI) createWebhook(c *fiber.Ctx) error {
	var req struct {
		URL         *string  `json:"url"`
		Events      []string `json:"events"`
		Description string   `json:"description"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.URL == nil {
		return apperr.InvalidField("url", "url is required (an https URL)")
	}
	e, err := s.webhooks.Create(c.UserContext(), webhookOwner(c),
		webhook.NewEndpoint{URL: *req.URL, Events: req.Events, Description: req.Description})
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(struct {
		webhookJSON
		Secret string `json:"secret"`
	}{renderWebhook(e.Endpoint), e.Secret})
}

func (s *webhooksAPI) listWebhooks(c *fiber.Ctx) error {
	list, err := s.webhooks.List(c.UserContext(), webhookOwner(c))
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(list))
	for i, e := range list {
		out[i] = renderWebhook(e)
	}
	return c.JSON(fiber.Map{"webhooks": out})
}

func (s *webhooksAPI) deleteWebhook(c *fiber.Ctx) error {
	if c.Query("id") == "" {
		return apperr.InvalidField("id", "id is required: DELETE /api/v1/webhooks?id=<webhook id>")
	}
	id, err := webhookID(c.Query("id"))
	if err != nil {
		return err
	}
	if err := s.webhooks.Delete(c.UserContext(), webhookOwner(c), id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "id": id})
}

type webhookAttemptJSON struct {
	EventID     string     `json:"event_id"`
	EventType   string     `json:"event_type"`
	AttemptedAt time.Time  `json:"attempted_at"`
	StatusCode  *int       `json:"status_code"`
	DurationMS  int64      `json:"duration_ms"`
	Error       *string    `json:"error"`
	State       string     `json:"state"`
	Attempts    int        `json:"attempts"`
	NextRetryAt *time.Time `json:"next_retry_at"`
}

func (s *webhooksAPI) webhookDeliveries(c *fiber.Ctx) error {
	id, err := webhookID(c.Params("id"))
	if err != nil {
		return err
	}
	page, err := paging.Parse(queryValues(c), webhook.LogBounds)
	if err != nil {
		return err
	}
	log, err := s.webhooks.Deliveries(c.UserContext(), webhookOwner(c), id, page.Limit)
	if err != nil {
		return err
	}
	out := make([]webhookAttemptJSON, len(log))
	for i, a := range log {
		out[i] = webhookAttemptJSON{EventID: a.EventID, EventType: a.EventType, AttemptedAt: a.AttemptedAt,
			StatusCode: a.StatusCode, DurationMS: a.Duration.Milliseconds(), State: a.State, Attempts: a.Attempts,
			NextRetryAt: a.NextAttemptAt}
		if a.Error != "" {
			out[i].Error = &a.Error
		}
	}
	return c.JSON(fiber.Map{"deliveries": out})
}

func (s *webhooksAPI) pingWebhook(c *fiber.Ctx) error {
	id, err := webhookID(c.Params("id"))
	if err != nil {
		return err
	}
	evt, err := s.webhooks.Ping(c.UserContext(), webhookOwner(c), id)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"event_id": evt, "type": "ping", "status": "queued"})
}

func (s *webhooksAPI) rotateWebhookSecret(c *fiber.Ctx) error {
	id, err := webhookID(c.Params("id"))
	if err != nil {
		return err
	}
	var req struct {
		ExpireInSeconds *int64 `json:"expire_in_seconds"`
	}
	if len(c.Body()) > 0 {
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
	}
	var overlap time.Duration
	if req.ExpireInSeconds != nil {
		if *req.ExpireInSeconds < 1 || *req.ExpireInSeconds > int64(7*24*time.Hour/time.Second) {
			return apperr.InvalidField("expire_in_seconds", "expire_in_seconds must be from 1 to %d", int64(7*24*time.Hour/time.Second))
		}
		overlap = time.Duration(*req.ExpireInSeconds) * time.Second
	}
	r, err := s.webhooks.Rotate(c.UserContext(), webhookOwner(c), id, overlap)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"id": id, "secret": r.Secret, "previous_secrets_expire_at": r.OldExpiresAt,
		"active_secrets": r.ActiveSecrets})
}

func (s *webhooksAPI) enableWebhook(c *fiber.Ctx) error {
	id, err := webhookID(c.Params("id"))
	if err != nil {
		return err
	}
	e, err := s.webhooks.Enable(c.UserContext(), webhookOwner(c), id)
	if err != nil {
		return err
	}
	return c.JSON(renderWebhook(e))
}
