package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/paging"
	"broll/tenancy"
)

// The deprecated v0 API under /api/external/broll: one shared secret for
// the whole service, the tenant named by a `source` field, end customers by
// `customer_email`. It is a thin adapter: listing and details are the v1
// handlers themselves (called with no key), purchases go through
// billing.LegacyPurchase on the same shared pool. It sits outside /api/v1,
// so neither key authentication nor the rate limiter ever see it (v0 never
// had a rate limit).
const legacyPrefix = "/api/external/broll"

// migrationGuidePath is the stable address of docs/migration.md, which the
// deprecation and sunset links of every legacy response point at.
const migrationGuidePath = "/docs/migration"

// legacyAPI holds what the v0 routes need: v1's clip reads, the accounts
// and the purchases, and the shared secret (only its hash, compared in
// constant time) and the sunset.
type legacyAPI struct {
	// clips are v1's listing and details, which v0's are.
	clips   *clipsAPI
	tenancy *tenancy.Service
	billing *billing.Service
	metrics *apiMetrics
	now     func() time.Time

	enabled    bool
	secretHash [sha256.Size]byte
	sunset     time.Time
	guideURL   string
}

// newLegacyAPI completes l, which holds the services, into the v0 routes'
// handlers with cfg's secret and sunset. Without BROLL_LEGACY_SECRET the
// routes exist only to say 404 (and, after the sunset, 410), so that a
// deployment that never had v0 clients exposes nothing.
func newLegacyAPI(l *legacyAPI, cfg config.Config, baseURL string) *legacyAPI {
	l.sunset, l.guideURL = cfg.LegacySunset.UTC(), baseURL+migrationGuidePath
	if secret := cfg.LegacySecret.Reveal(); secret != "" {
		l.enabled, l.secretHash = true, sha256.Sum256([]byte(secret))
	}
	return l
}

// guard runs first on every legacy route, known or not. The sunset is
// checked before the secret: a retired API owes nobody a 401.
func (l *legacyAPI) guard(c *fiber.Ctx) error {
	if !l.now().Before(l.sunset) {
		day := l.sunset.Format("2006-01-02")
		return apperr.New(apperr.Sunset, "the legacy v0 API was retired on %s; use /api/v1 with a dsk_ key (migration guide: %s)",
			day, l.guideURL).With("sunset", day).With("migration_guide", l.guideURL)
	}
	if !l.enabled {
		return apperr.NotFoundf("the legacy v0 API is not enabled on this service; use /api/v1")
	}
	if !l.authorized(c) {
		return apperr.New(apperr.Unauthorized, "send the legacy shared secret as `Authorization: Bearer <secret>` or `X-API-Key: <secret>`")
	}
	return c.Next()
}

// authorized accepts the secret from either header. Comparing hashes keeps
// the comparison constant-time whatever the length of what was sent.
func (l *legacyAPI) authorized(c *fiber.Ctx) bool {
	ok := false
	if v := strings.TrimSpace(c.Get("X-API-Key")); v != "" {
		ok = l.matches(v) || ok
	}
	if v, has := bearer(c.Get(fiber.HeaderAuthorization)); has {
		ok = l.matches(v) || ok
	}
	return ok
}

func (l *legacyAPI) matches(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], l.secretHash[:]) == 1
}

// account resolves the required source to its account: missing is 400;
// unknown, or an account not marked as a v0 customer, is the same 404.
func (l *legacyAPI) account(c *fiber.Ctx, source string) (tenancy.Account, error) {
	source, err := requireSource(source)
	if err != nil {
		return tenancy.Account{}, err
	}
	return l.tenancy.LegacyAccount(c.UserContext(), source)
}

func requireSource(source string) (string, error) {
	source = strings.TrimSpace(source)
	if source == "" {
		return "", apperr.InvalidField("source", "source is required: the source name of your account")
	}
	return source, nil
}

// list is GET /api/v1/broll for a caller with no key: every filter, sort
// and page parameter of v1, but no semantic search (v0 never had it).
func (l *legacyAPI) list(c *fiber.Ctx) error {
	if c.Context().QueryArgs().Has("semantic_search") {
		return apperr.InvalidField("semantic_search", "semantic_search is not available in the legacy v0 API; use GET /api/v1/broll")
	}
	if _, err := l.account(c, c.Query("source")); err != nil {
		return err
	}
	return l.clips.listBroll(c)
}

func (l *legacyAPI) details(c *fiber.Ctx) error {
	if _, err := l.account(c, c.Query("source")); err != nil {
		return err
	}
	return l.clips.getBroll(c)
}

// legacyPurchaseInput is the v0 purchase body.
type legacyPurchaseInput struct {
	Source        string   `json:"source"`
	VideoIDs      []string `json:"video_ids"`
	CustomerEmail *string  `json:"customer_email"`
}

// legacyPurchaseJSON is the v1 purchase result plus who it was for.
type legacyPurchaseJSON struct {
	purchaseResultJSON
	Source        string  `json:"source"`
	CustomerEmail *string `json:"customer_email"`
}

func (l *legacyAPI) purchase(c *fiber.Ctx) error {
	var in legacyPurchaseInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	source, err := requireSource(in.Source)
	if err != nil {
		return err
	}
	req, err := purchaseInput{VideoIDs: in.VideoIDs}.request()
	if err != nil {
		return err
	}
	buyer := billing.LegacyBuyer{Source: source}
	if in.CustomerEmail != nil {
		if buyer.CustomerEmail, err = billing.NormalizeCustomerEmail(*in.CustomerEmail); err != nil {
			return err
		}
	}
	acct, err := l.account(c, buyer.Source)
	if err != nil {
		return err
	}
	buyer.AccountID = acct.ID
	res, err := l.billing.LegacyPurchase(c.UserContext(), buyer, req.VideoIDs)
	l.metrics.observePurchase("v0", res, err)
	if err != nil {
		return err
	}
	out := legacyPurchaseJSON{purchaseResultJSON: renderPurchase(res, nil), Source: acct.Source}
	if buyer.CustomerEmail != "" {
		out.CustomerEmail = &buyer.CustomerEmail
	}
	return c.JSON(out)
}

// purchases lists the account's v0 purchases in the shape of the v1
// listing; customer_email narrows it to one end customer.
func (l *legacyAPI) purchases(c *fiber.Ctx) error {
	source, err := requireSource(c.Query("source"))
	if err != nil {
		return err
	}
	page, err := paging.Parse(queryValues(c), billing.LegacyListBounds)
	if err != nil {
		return err
	}
	q, err := billing.LegacyListParams{
		CustomerEmail: c.Query("customer_email"),
		StartDate:     c.Query("start_date"), EndDate: c.Query("end_date"), Page: page,
	}.Parse()
	if err != nil {
		return err
	}
	acct, err := l.account(c, source)
	if err != nil {
		return err
	}
	listing, err := l.billing.LegacyPurchases(c.UserContext(), acct.ID, q)
	if err != nil {
		return err
	}
	return c.JSON(renderListing(listing, nil))
}

// legacyHeaders are exactly what v0 clients of the original service read:
// "Deprecation: true" and the sunset as a bare date, not the RFC 9745 /
// RFC 8594 forms. The links point both relations at the migration guide.
func legacyHeaders(cfg config.Config, baseURL string) [][2]string {
	guide := baseURL + migrationGuidePath
	return [][2]string{
		{"Deprecation", "true"},
		{"Sunset", cfg.LegacySunset.UTC().Format("2006-01-02")},
		{"Link", "<" + guide + `>; rel="deprecation", <` + guide + `>; rel="sunset"`},
	}
}

// markLegacy sets the deprecation headers on every response under the v0
// prefix. It is mounted before the body reader, so that the refusals made
// before any v0 route runs (413, 415) carry them too.
func markLegacy(headers [][2]string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		for _, h := range headers {
			c.Set(h[0], h[1])
		}
		return c.Next()
	}
}
