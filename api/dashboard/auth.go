package dashboard

import (
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/tenancy"
)

// notices are the fixed messages a redirect may ask a page to show (by
// name, so that no URL can put words on a page).
var notices = map[string]string{
	"signed-out":      "You are signed out.",
	"signed-out-all":  "You are signed out on every device.",
	"expired":         "Your session has ended. Sign in again to continue.",
	"password-set":    "Your password is set. Sign in with your email and new password.",
	"revoked":         "The key is revoked. API requests with it are refused from now on.",
	"limits":          "The key's limits are saved. Every API node applies them from the key's next request.",
	"webhook-enabled": "The endpoint is enabled again; new events are delivered to it.",
	"webhook-disabled": "The endpoint is disabled: nothing is sent to it until it is enabled again, " +
		"and events written meanwhile are never sent to it.",
	"webhook-deleted": "The endpoint is deleted, with its signing secrets and its delivery log.",
}

type signInView struct {
	Email     string
	Next      string
	Error     string
	CSRFToken string
}

func (h *Dashboard) SignInForm(c *fiber.Ctx) error {
	// Already signed in: straight to the dashboard.
	if _, err := h.Sessions.Lookup(c.UserContext(), c.Cookies(sessionCookie)); err == nil {
		return c.Redirect(safeNext(c.Query("next")), fiber.StatusSeeOther)
	}
	return h.views.render(c, http.StatusOK, "signin", view{
		Title: "Sign in", Notice: notices[c.Query("m")],
		Data: signInView{Next: safeNext(c.Query("next")), CSRFToken: h.formToken(c)},
	})
}

func (h *Dashboard) SignIn(c *fiber.Ctx) error {
	email := c.FormValue("email")
	_, token, err := h.Sessions.SignIn(c.UserContext(), email, c.FormValue("password"), h.ClientAddr(c))
	if err != nil {
		code := apperr.CodeOf(err)
		if code != apperr.Unauthorized && code != apperr.RateLimited {
			return err
		}
		ae, _ := apperr.As(err)
		if secs, ok := ae.Fields["retry_after_seconds"].(int); ok {
			c.Set(fiber.HeaderRetryAfter, itoa(secs))
		}
		// Sign-in failures stay on the form, with the email kept.
		return h.views.render(c, classify.Status(code), "signin", view{
			Title: "Sign in",
			Data: signInView{Email: email, Next: safeNext(c.FormValue("next")), Error: ae.Message,
				CSRFToken: h.formToken(c)},
		})
	}
	c.Cookie(h.cookie(sessionCookie, token, h.Sessions.Options().MaxAge))
	return c.Redirect(safeNext(c.FormValue("next")), fiber.StatusSeeOther)
}

func (h *Dashboard) SignOut(c *fiber.Ctx) error {
	token, _ := c.Locals(localToken).(string)
	if err := h.Sessions.End(c.UserContext(), token); err != nil {
		return err
	}
	h.clearSessionCookie(c)
	return c.Redirect(Prefix+"/sign-in?m=signed-out", fiber.StatusSeeOther)
}

func (h *Dashboard) SignOutEverywhere(c *fiber.Ctx) error {
	if _, err := h.Sessions.EndAll(c.UserContext(), session(c).UserID); err != nil {
		return err
	}
	h.clearSessionCookie(c)
	return c.Redirect(Prefix+"/sign-in?m=signed-out-all", fiber.StatusSeeOther)
}

type setPasswordView struct {
	Email     string
	Token     string
	Error     string
	CSRFToken string
	MinLength int
}

// SetPasswordForm shows the form of a one-time link, or says the link no
// longer works.
func (h *Dashboard) SetPasswordForm(c *fiber.Ctx) error {
	return h.showSetPassword(c, c.Query("token"), http.StatusOK, "")
}

// showSetPassword renders the form of a working link, with msg as its error.
func (h *Dashboard) showSetPassword(c *fiber.Ctx, token string, status int, msg string) error {
	u, err := h.Tenancy.PasswordLinkUser(c.UserContext(), token, h.Now())
	if err != nil {
		return err
	}
	// The token must not leak to other sites through the Referer header.
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	return h.views.render(c, status, "setpassword", view{
		Title: "Choose your password",
		Data: setPasswordView{Email: u.Email, Token: token, Error: msg, CSRFToken: h.formToken(c),
			MinLength: tenancy.MinPasswordLength},
	})
}

func (h *Dashboard) SetPassword(c *fiber.Ctx) error {
	ctx := c.UserContext()
	token, password := c.FormValue("token"), c.FormValue("password")
	again := func(msg string) error { return h.showSetPassword(c, token, http.StatusBadRequest, msg) }
	if password != c.FormValue("password_again") {
		return again("The two passwords differ.")
	}
	u, err := h.Tenancy.SetPassword(ctx, token, password, h.Now())
	if apperr.CodeOf(err) == apperr.Invalid {
		ae, _ := apperr.As(err)
		return again(ae.Message)
	}
	if err != nil {
		return err
	}
	// A new password ends every session of the old one.
	if _, err := h.Sessions.EndAll(ctx, u.ID); err != nil {
		return err
	}
	h.clearSessionCookie(c)
	return c.Redirect(Prefix+"/sign-in?m=password-set&next="+url.QueryEscape(Prefix+"/"), fiber.StatusSeeOther)
}
