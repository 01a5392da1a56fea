package dashboard

import (
	"context"
	"errors"

	"broll/tenancy"
)

// SessionCookie names the cookie that carries a signed-in session.
const SessionCookie = sessionCookie

// SessionlessForms are the form posts that need no session (they are how
// one is made); every other post needs one (RequireSession).
var SessionlessForms = []string{Prefix + "/sign-in", Prefix + "/set-password"}

// HasSession reports whether token (the SessionCookie's value) names a live
// session, from a request's headers alone: the API withholds the form body
// of a post without one, which RequireSession answers with its redirect to
// sign in without reading the body. A lookup that fails otherwise (Redis
// away) counts as a session: the page's own check answers then.
func (h *Dashboard) HasSession(ctx context.Context, token string) bool {
	_, err := h.Sessions.Lookup(ctx, token)
	return !errors.Is(err, tenancy.ErrNoSession)
}
