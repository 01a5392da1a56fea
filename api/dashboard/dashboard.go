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
	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/internal/config"
	"broll/tenancy"
	"broll/webhook"
)

// Prefix is where the dashboard is mounted.
const Prefix = "/dashboard"

// Deps is what the dashboard needs; api.New passes its own.
type Deps struct {
	Config   config.Config
	Logger   *slog.Logger
	Tenancy  *tenancy.Service
	Billing  *billing.Service
	Webhooks *webhook.Service
	Usage    *tenancy.Usage
	Gate     *tenancy.Gate
	Auth     *tenancy.Authenticator
	Revoker  *tenancy.Revoker
	Sessions *tenancy.Sessions
	// RequestID returns the request's id, shown on error pages.
	RequestID func(*fiber.Ctx) string
	// ClientAddr returns the client's address (through trusted proxies),
	// which sign-in attempts are throttled by. Nil: the connection's.
	ClientAddr func(*fiber.Ctx) string
	Now        func() time.Time
}

// handler holds the dashboard's dependencies; the routes are its methods.
type handler struct {
	Deps
	views  *renderer
	secure bool   // cookies are Secure (the service is served over HTTPS)
	origin string // the public origin forms must come from
}

// Mount registers the dashboard's routes on app under Prefix, before the
// app's catch-all.
func Mount(app *fiber.App, d Deps) error {
	views, err := newRenderer()
	if err != nil {
		return err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.ClientAddr == nil {
		d.ClientAddr = func(c *fiber.Ctx) string { return c.Context().RemoteIP().String() }
	}
	h := &handler{Deps: d, views: views, secure: d.Config.SecureCookies(), origin: originOf(d.Config.BaseURL())}

	g := app.Group(Prefix, h.handleErrors, h.securityHeaders)
	g.Get("/assets/:hash/:file", h.asset)

	g.Get("/sign-in", h.signInForm)
	g.Post("/sign-in", h.checkOrigin, h.checkFormToken, h.signIn)
	g.Get("/set-password", h.setPasswordForm)
	g.Post("/set-password", h.checkOrigin, h.checkFormToken, h.setPassword)

	// Everything below needs a session; every POST a CSRF token too.
	signedIn := []fiber.Handler{h.requireSession}
	form := []fiber.Handler{h.checkOrigin, h.requireSession, h.checkCSRF}
	g.Post("/sign-out", append(form, h.signOut)...)
	g.Post("/sign-out-everywhere", append(form, h.signOutEverywhere)...)

	g.Get("/", append(signedIn, h.overview)...)
	g.Get("/keys", append(signedIn, h.keys)...)
	g.Post("/keys", append(form, h.createRootKey)...)
	g.Get("/keys/:id", append(signedIn, h.rootKey)...)
	g.Post("/keys/:id/customers", append(form, h.createCustomerKey)...)
	g.Post("/keys/:id/limits", append(form, h.setLimits)...)
	g.Get("/keys/:id/revoke", append(signedIn, h.revokeForm)...)
	g.Post("/keys/:id/revoke", append(form, h.revokeKey)...)
	g.Get("/purchases", append(signedIn, h.purchases)...)
	g.Get("/purchases.csv", append(signedIn, h.purchasesCSV)...)
	g.Get("/credits", append(signedIn, h.credits)...)
	g.Get("/webhooks", append(signedIn, h.webhooks)...)
	g.Post("/webhooks/:id/enable", append(form, h.enableWebhook)...)

	g.Use(func(c *fiber.Ctx) error { return apperr.NotFoundf("there is no such page") })
	return nil
}

// securityHeaders: pages load nothing from elsewhere, run no inline code,
// cannot be framed and post only to this origin.
func (h *handler) securityHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	return c.Next()
}

func (h *handler) asset(c *fiber.Ctx) error {
	b, ok := h.views.assets[c.Params("file")]
	if !ok || h.views.base != Prefix+"/assets/"+c.Params("hash") {
		return apperr.NotFoundf("no such asset")
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Type(strings.TrimPrefix(path.Ext(c.Params("file")), "."))
	return c.Send(b)
}

// handleErrors renders every error of a dashboard route as a page, with
// the status the JSON API would give it. Unknown errors are logged with the
// request id and shown only as that id.
func (h *handler) handleErrors(c *fiber.Ctx) error {
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
	for _, p := range []string{"/keys", "/purchases", "/credits"} {
		if strings.HasPrefix(page, Prefix+p) {
			return Prefix + p
		}
	}
	return Prefix + "/"
}
