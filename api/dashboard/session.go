package dashboard

import (
	"crypto/subtle"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/tenancy"
)

const (
	// sessionCookie carries the session token; only its hash is in Redis.
	sessionCookie = "broll_dashboard"
	// formCookie carries the CSRF token of the forms shown before there is
	// a session (sign-in, set password): the form must echo it.
	formCookie = "broll_dashboard_form"
	// csrfField is the hidden field of every form.
	csrfField = "csrf_token"

	localSession = "dashboard_session"
	localToken   = "dashboard_token"
)

// cookie is the shape of every dashboard cookie: HttpOnly, SameSite=Lax
// (sent on top-level navigation, never on cross-site posts), Secure when
// the service is served over HTTPS, and only sent to /dashboard.
func (h *Dashboard) cookie(name, value string, maxAge time.Duration) *fiber.Cookie {
	ck := &fiber.Cookie{Name: name, Value: value, Path: Prefix, HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: h.secure}
	switch {
	case maxAge > 0:
		ck.MaxAge = int(maxAge.Seconds())
	case maxAge < 0:
		ck.MaxAge = -1
		ck.Expires = time.Unix(0, 0)
	default:
		ck.SessionOnly = true
	}
	return ck
}

func (h *Dashboard) clearSessionCookie(c *fiber.Ctx) {
	c.Cookie(h.cookie(sessionCookie, "", -1))
}

// RequireSession finds the request's session. Without one, a page request
// is sent to sign in and comes back afterwards.
func (h *Dashboard) RequireSession(c *fiber.Ctx) error {
	token := c.Cookies(sessionCookie)
	sess, err := h.Sessions.Lookup(c.UserContext(), token)
	if errors.Is(err, tenancy.ErrNoSession) {
		if token != "" {
			h.clearSessionCookie(c)
		}
		target := Prefix + "/sign-in"
		if c.Method() == fiber.MethodGet {
			target += "?next=" + url.QueryEscape(requestPath(c))
			if token != "" {
				target += "&m=expired"
			}
		} else if token != "" {
			target += "?m=expired"
		}
		return c.Redirect(target, fiber.StatusSeeOther)
	}
	if err != nil {
		return err
	}
	c.Locals(localSession, &sess)
	c.Locals(localToken, token)
	return c.Next()
}

// requestPath is the path and query of the request, whatever form its
// request line took.
func requestPath(c *fiber.Ctx) string {
	p := c.Path()
	if q := c.Context().QueryArgs().String(); q != "" {
		p += "?" + q
	}
	return p
}

func session(c *fiber.Ctx) *tenancy.Session {
	s, _ := c.Locals(localSession).(*tenancy.Session)
	return s
}

var errForgedForm = apperr.New(apperr.Forbidden,
	"this form has expired or did not come from this dashboard; go back, reload the page and try again")

// CheckCSRF compares the form's token with the session's, in constant time.
func (h *Dashboard) CheckCSRF(c *fiber.Ctx) error {
	if !sameToken(c.FormValue(csrfField), session(c).CSRFToken) {
		return errForgedForm
	}
	return c.Next()
}

// CheckFormToken is checkCSRF for the forms shown before sign-in: the
// token must match the form cookie set with the form (a cross-site page can
// neither read that cookie nor set it).
func (h *Dashboard) CheckFormToken(c *fiber.Ctx) error {
	if !sameToken(c.FormValue(csrfField), c.Cookies(formCookie)) {
		return errForgedForm
	}
	return c.Next()
}

// formToken returns the pre-session form token, setting its cookie when
// the browser has none yet.
func (h *Dashboard) formToken(c *fiber.Ctx) string {
	tok := c.Cookies(formCookie)
	if len(tok) < 32 || len(tok) > 64 {
		tok = tenancy.RandomToken()
		c.Cookie(h.cookie(formCookie, tok, 0))
	}
	return tok
}

func sameToken(got, want string) bool {
	return want != "" && len(got) == len(want) && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// CheckOrigin refuses a POST whose Origin (or, without one, Referer) names
// another site: a second line behind the CSRF token. Browsers send at
// least one of them on form posts; a request with neither is left to the
// token.
func (h *Dashboard) CheckOrigin(c *fiber.Ctx) error {
	from := c.Get(fiber.HeaderOrigin)
	if from == "" || from == "null" {
		if ref := c.Get(fiber.HeaderReferer); ref != "" {
			from = originOf(ref)
		}
	}
	if from == "" {
		return c.Next()
	}
	from = strings.ToLower(from)
	if from == h.origin || hostOf(from) == strings.ToLower(c.Hostname()) {
		return c.Next()
	}
	return errForgedForm
}

// originOf reduces a URL to scheme://host[:port].
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

func hostOf(origin string) string {
	_, host, _ := strings.Cut(origin, "://")
	return host
}

// safeNext keeps a post-sign-in redirect inside the dashboard.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") ||
		strings.HasPrefix(next, Prefix+"/sign-") || strings.HasPrefix(next, Prefix+"/set-password") {
		return Prefix + "/"
	}
	if rest := next[len(Prefix):]; rest != "" && rest[0] != '/' && rest[0] != '?' {
		return Prefix + "/"
	}
	return next
}

func itoa(n int) string { return strconv.Itoa(n) }
