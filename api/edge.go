package api

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/tenancy"
)

const (
	localPrincipal = "principal"
	localPass      = "pass"
)

// authenticate is the edge of every v1 and ops route: key -> principal,
// then one Redis round trip for revocation markers, the rate limiter and
// usage. Refusals happen here, before any handler runs. Only reads (GET,
// HEAD) answer from this node's copies, so only their admission reads the
// marks (admission.Pass): a purchase or a key change reads Postgres, and
// its zero pass would make any read it did do the same.
func (s *keyEdge) authenticate(c *fiber.Ctx) error {
	return s.admitKey(c, c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead)
}

// authenticateReader is authenticate for MCP, whose tool calls (POSTs)
// read the catalog from copies: its admission always reads the marks.
func (s *keyEdge) authenticateReader(c *fiber.Ctx) error {
	return s.admitKey(c, true)
}

// admitKey authenticates the request's key and admits it; copies says
// whether the request may answer from this node's copies.
func (s *keyEdge) admitKey(c *fiber.Ctx, copies bool) error {
	key, ok := bearer(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return apperr.New(apperr.Unauthorized, "send your API key as `Authorization: Bearer dsk_...`")
	}
	ctx := c.UserContext()
	generation := s.auth.Generation()
	p, err := s.auth.Authenticate(ctx, key, true)
	if err != nil {
		return err
	}
	admit := s.gate.Admit
	if !copies {
		admit = s.gate.AdmitWithoutCopies
	}
	d, err := admit(ctx, p.Caller())
	if err != nil {
		return err
	}
	if d.Stale && !d.Fallback && s.auth.Generation() == generation {
		// The key was changed since this node cached it: read it again and
		// admit it under its new settings (the stale admission's token is
		// the one request this costs, once per change and node).
		s.auth.Forget(p.KeyID)
		if p, err = s.auth.Authenticate(ctx, key, false); err != nil {
			return err
		}
		if d, err = s.gate.Readmit(ctx, p.Caller(), copies); err != nil {
			return err
		}
	}
	if d.Fallback || s.auth.Generation() != generation {
		// Without Redis the revocation markers cannot be read, and after
		// Redis lost its data (the cache was dropped meanwhile) they may be
		// gone: trust only the database, never the cache.
		if p, err = s.auth.Authenticate(ctx, key, false); err != nil {
			return err
		}
	}
	if d.Revoked {
		s.auth.Forget(p.KeyID, p.RootKeyID)
		return apperr.New(apperr.Unauthorized, "missing, malformed, unknown or revoked API key")
	}
	c.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	c.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
	c.Set("X-RateLimit-Reset", strconv.Itoa(ceilSeconds(d.ResetAfter)))
	if !d.Allowed {
		s.metrics.rateLimited.Inc()
		retry := max(ceilSeconds(d.RetryAfter), 1)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retry))
		return apperr.New(apperr.RateLimited, "rate limit of %d requests per minute exceeded; retry in %d s", d.Limit, retry).
			With("retry_after_seconds", retry).With("limit", d.Limit)
	}
	c.Locals(localPrincipal, p)
	c.Locals(localPass, d.Pass)
	return c.Next()
}

// ceilSeconds rounds up, so that waiting the advertised time is always enough.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

func bearer(h string) (string, bool) {
	scheme, key, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	key = strings.TrimSpace(key)
	return key, key != ""
}

func principal(c *fiber.Ctx) tenancy.Principal {
	p, _ := c.Locals(localPrincipal).(tenancy.Principal)
	return p
}

// pass is what the request's admission saw, which its reads may answer
// from this node's copies under; zero when there was none (Redis away, or
// no admission). A purchase or a change the request makes ends the pass's
// trust in what it changed by itself (admission.Pass).
func pass(c *fiber.Ctx) admission.Pass {
	p, _ := c.Locals(localPass).(admission.Pass)
	return p
}

// requireScope refuses principals without the scope with 403 naming it.
func requireScope(scope tenancy.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !principal(c).Has(scope) {
			return apperr.New(apperr.InsufficientScope, "this operation needs the %s scope", scope).
				With("required_scope", string(scope))
		}
		return c.Next()
	}
}
