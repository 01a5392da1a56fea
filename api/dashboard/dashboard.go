package dashboard

import (
	"errors"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/billing/license"
	"broll/collections"
	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/internal/config"
	"broll/tenancy"
	"broll/webhook"
)

// Prefix is where the dashboard is mounted.
const Prefix = "/dashboard"

// Deps is what the dashboard needs; the api package passes its own.
type Deps struct {
	Config  config.Config
	Logger  *slog.Logger
	Tenancy *tenancy.Service
	Billing *billing.Service
	// Collections lists the keys' shortlists on the collections page.
	Collections *collections.Service
	// Licenses signs the certificates the purchases page links to.
	Licenses *license.Service
	Webhooks *webhook.Service
	Usage    *tenancy.Usage
	// KeyChanges changes and revokes keys on every node at once.
	KeyChanges *tenancy.KeyChanges
	Sessions   *tenancy.Sessions
	// RequestID returns the request's id, shown on error pages.
	RequestID func(*fiber.Ctx) string
	// ClientAddr returns the client's address (through trusted proxies),
	// which sign-in attempts are throttled by. Nil: the connection's.
	ClientAddr func(*fiber.Ctx) string
	Now        func() time.Time
}

// Dashboard holds the dashboard's dependencies; its pages and middleware
// are its methods, mounted under Prefix by the route table in package api.
type Dashboard struct {
	Deps
	views  *renderer
	secure bool   // cookies are Secure (the service is served over HTTPS)
	origin string // the public origin forms must come from
}

// New builds the dashboard.
func New(d Deps) (*Dashboard, error) {
	views, err := newRenderer()
	if err != nil {
		return nil, err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.ClientAddr == nil {
		d.ClientAddr = func(c *fiber.Ctx) string { return c.Context().RemoteIP().String() }
	}
	return &Dashboard{Deps: d, views: views, secure: d.Config.SecureCookies(), origin: originOf(d.Config.BaseURL())}, nil
}

// NotFound ends the dashboard's routes: an unknown page is an error page,
// not the JSON API's 404.
func NotFound(*fiber.Ctx) error { return apperr.NotFoundf("there is no such page") }

// SecurityHeaders: pages load nothing from elsewhere, run no inline code,
// cannot be framed and post only to this origin.
func (h *Dashboard) SecurityHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	return c.Next()
}

// Asset serves the pages' stylesheet and script under a hashed path.
func (h *Dashboard) Asset(c *fiber.Ctx) error {
	b, ok := h.views.assets[c.Params("file")]
	if !ok || h.views.base != Prefix+"/assets/"+c.Params("hash") {
		return apperr.NotFoundf("no such asset")
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Type(strings.TrimPrefix(path.Ext(c.Params("file")), "."))
	return c.Send(b)
}

// HandleErrors renders every error of a dashboard route as a page, with
// the status the JSON API would give it. Unknown errors are logged with the
// request id and shown only as that id.
func (h *Dashboard) HandleErrors(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	var fe *fiber.Error
	if errors.As(err, &fe) && fe.Code < 500 {
		err = apperr.New(apperr.Invalid, "%s", http.StatusText(fe.Code))
		if fe.Code == http.StatusNotFound {
			err = apperr.NotFoundf("there is no such page")
		}
	}
	out := classify.Error(err)
	ae, status := out.Err, out.Status
	if !out.Known {
		h.Logger.Error("dashboard request failed", "request_id", h.RequestID(c), "method", c.Method(),
			"path", c.Path(), "error", err.Error())
		ae = apperr.New(apperr.Internal, "something went wrong on our side")
	}
	if ae.Code == apperr.Unavailable {
		h.Logger.Warn("dashboard unavailable", "request_id", h.RequestID(c), "path", c.Path(), "error", err.Error())
	}
	if secs, ok := ae.Fields["retry_after_seconds"].(int); ok && status == http.StatusTooManyRequests {
		c.Set(fiber.HeaderRetryAfter, itoa(secs))
	}
	if status == http.StatusServiceUnavailable {
		c.Set(fiber.HeaderRetryAfter, itoa(classify.RetryAfter(ae)))
	}
	sess, _ := c.Locals(localSession).(*tenancy.Session)
	return h.show(c, status, "error", view{
		Title: titleOf(status), Session: sess,
		Data: errorView{Status: status, Title: titleOf(status), Message: ae.Message, RequestID: h.RequestID(c),
			Back: backLink(c.Path())},
	})
}

type errorView struct {
	Status    int
	Title     string
	Message   string
	RequestID string
	Back      string
}

func titleOf(status int) string {
	switch status {
	case http.StatusNotFound:
		return "Not found"
	case http.StatusForbidden:
		return "Not allowed"
	case http.StatusTooManyRequests:
		return "Too many attempts"
	case http.StatusUnauthorized:
		return "Sign-in failed"
	}
	if status >= 500 {
		return "Something went wrong"
	}
	return http.StatusText(status)
}

// backLink is the page to go back to from an error on page.
func backLink(page string) string {
	for _, p := range []string{"/keys", "/purchases", "/balance"} {
		if strings.HasPrefix(page, Prefix+p) {
			return Prefix + p
		}
	}
	return Prefix + "/"
}
