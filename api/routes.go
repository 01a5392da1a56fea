package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/compress"

	"broll/api/dashboard"
	"broll/billing"
	"broll/catalog"
	"broll/tenancy"
)

// routes is the whole URL space: method, path, what it needs, handler.
// Registration order is matching order: a group's middleware applies to
// every route registered after it under its prefix (also to unknown paths
// there, which is why scopes sit on groups), and a static path must come
// before a parameter that would match it.
func (s *server) routes(app *fiber.App, d Deps) {
	scope := requireScope
	// Downloads: the signed link is the credential; registered before the
	// v1 group so that its key authentication never sees them.
	app.Get(billing.DownloadPath+":purchase_id", s.download)

	// REST v1: a bearer key, then the scope of each group or route.
	v1 := app.Group("/api/v1", s.authenticate)
	keys := v1.Group("/keys", scope(tenancy.ScopeKeysManage))
	keys.Post("", s.idempotent, s.createKey)
	keys.Get("", s.listKeys)
	keys.Delete("", s.revokeKey)
	keys.Patch("", s.updateKey)
	v1.Get("/pricing", scope(tenancy.ScopePricingRead), s.pricing)
	v1.Get("/balance", scope(tenancy.ScopeBrollBilling), s.balance)
	v1.Post("/broll/purchase", scope(tenancy.ScopeBrollPurchase), s.idempotent, s.purchase)
	v1.Get("/broll/purchases", scope(tenancy.ScopeBrollBilling), s.listPurchases)
	hooks := v1.Group("/webhooks", scope(tenancy.ScopeWebhooksManage)) // root keys only
	hooks.Post("", s.createWebhook)
	hooks.Get("", s.listWebhooks)
	hooks.Delete("", s.deleteWebhook)
	hooks.Get("/:id/deliveries", s.webhookDeliveries)
	hooks.Post("/:id/test", s.pingWebhook)
	hooks.Post("/:id/rotate", s.rotateWebhookSecret)
	hooks.Post("/:id/enable", s.enableWebhook)
	v1.Get("/broll", scope(tenancy.ScopeBrollRead), s.listBroll)
	v1.Get("/broll/filters", scope(tenancy.ScopeBrollRead), s.brollFilters(&filterCache{}))
	v1.Get("/broll/:id", scope(tenancy.ScopeBrollRead), s.getBroll)

	// Ops: ops keys (catalog:write, which no customer or root key holds),
	// with the authentication, rate limit and usage counting of v1.
	ops := app.Group("/api/ops/v1", s.authenticate, scope(tenancy.ScopeCatalogWrite))
	ops.Post("/videos", s.opsImport)
	ops.Get("/videos/:id", s.opsVideo)
	ops.Delete("/videos/:id", s.opsRetire)
	ops.Post("/uploads", s.createUpload)
	ops.Put("/uploads/:id", s.receiveUpload)

	// Public media: no key.
	app.Get(previewsPath+":video_id", s.publicMedia(catalog.MediaPreview))
	app.Get(thumbnailsPath+":video_id", s.publicMedia(catalog.MediaThumbnail))

	// MCP: a foreign Origin is refused first, CORS preflights (no key) are
	// answered before authentication, and JSON-RPC runs only for requests
	// authenticate admitted, so 401 is an HTTP answer as in v1; a request
	// over the rate limit is answered in JSON-RPC (rateLimitInBand).
	mcpEP := s.newMCPEndpoint(d.Config.MCPAllowedOrigins)
	app.All(mcpPath, mcpEP.checkOrigin, mcpEP.cors(), postOnly, mcpEP.rateLimitInBand, s.authenticate, mcpEP.serve)

	// Legacy v0: its own shared secret, no key authentication, no rate limit.
	v0 := s.newLegacyAPI(d.Config)
	legacy := app.Group(legacyPrefix, v0.guard)
	legacy.Get("", v0.list)
	legacy.Get("/purchases", v0.purchases)
	legacy.Post("/purchase", v0.purchase)
	legacy.Get("/:id", v0.details)

	// Docs: no key.
	explorer, asset := docsSite()
	app.Get("/api/openapi.json", serveOpenAPI)
	app.Get("/docs", explorer)
	app.Get(migrationGuidePath, migrationGuide())
	app.Get(errorDocsPath, errorIndex)
	app.Get(errorDocsPath+"/:code", errorPage)
	app.Get("/docs/assets/:hash/:file", compress.New(), asset)
	app.Get("/docs/:guide", guidesSite()) // after the fixed /docs paths, which it would otherwise take

	// Dashboard: HTML pages with their own sign-in; error pages and
	// security headers on every path, a session on every page behind it,
	// and on every form post the Origin, the session and a CSRF token.
	dash, err := dashboard.New(dashboard.Deps{
		Config: d.Config, Logger: d.Logger, Tenancy: d.Tenancy, Billing: d.Billing, Webhooks: d.Webhooks, Usage: d.Usage,
		Gate: d.Gate, Auth: d.Auth, Revoker: s.revoker, Sessions: d.Sessions, RequestID: requestID, Now: d.Now,
		ClientAddr: s.clientAddr,
	})
	if err != nil {
		panic("api: " + err.Error()) // embedded templates: a broken build, not a runtime condition
	}
	session := dash.RequireSession
	form := func(page fiber.Handler) []fiber.Handler {
		return []fiber.Handler{dash.CheckOrigin, dash.RequireSession, dash.CheckCSRF, page}
	}
	pages := app.Group(dashboard.Prefix, dash.HandleErrors, dash.SecurityHeaders)
	pages.Get("/assets/:hash/:file", dash.Asset)
	pages.Get("/sign-in", dash.SignInForm)
	pages.Post("/sign-in", dash.CheckOrigin, dash.CheckFormToken, dash.SignIn)
	pages.Get("/set-password", dash.SetPasswordForm)
	pages.Post("/set-password", dash.CheckOrigin, dash.CheckFormToken, dash.SetPassword)
	pages.Post("/sign-out", form(dash.SignOut)...)
	pages.Post("/sign-out-everywhere", form(dash.SignOutEverywhere)...)
	pages.Get("/", session, dash.Overview)
	pages.Get("/keys", session, dash.Keys)
	pages.Post("/keys", form(dash.CreateRootKey)...)
	pages.Get("/keys/:id", session, dash.RootKey)
	pages.Post("/keys/:id/customers", form(dash.CreateCustomerKey)...)
	pages.Post("/keys/:id/limits", form(dash.SetLimits)...)
	pages.Get("/keys/:id/revoke", session, dash.RevokeForm)
	pages.Post("/keys/:id/revoke", form(dash.RevokeKey)...)
	pages.Get("/purchases", session, dash.Purchases)
	pages.Get("/purchases.csv", session, dash.PurchasesCSV)
	pages.Get("/balance", session, dash.Balance)
	pages.Get("/credits", dash.BalanceMoved)
	pages.Get("/webhooks", session, dash.WebhooksPage)
	pages.Post("/webhooks/:id/enable", form(dash.EnableWebhook)...)
	pages.Use(dashboard.NotFound)

	// Probes: no key.
	h := &health{pool: d.Pool, rdb: d.Redis, warmup: d.Warmup}
	app.Get("/healthz", h.live)
	app.Get("/readyz", h.ready)
}
