package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/compress"

	"broll/api/dashboard"
	"broll/billing"
	"broll/catalog"
	"broll/tenancy"
)

// surfaces are the handlers of the URL space, each group holding the
// services it uses (handlers.go), built and checked by newApp, so that
// routes only lists.
type surfaces struct {
	edge         *keyEdge
	keys         *keysAPI
	webhooks     *webhooksAPI
	clips        *clipsAPI
	purchases    *purchasesAPI
	collections  *collectionsAPI
	ops          *opsAPI
	uploads      *uploadsAPI
	downloads    *downloadsAPI
	licensePages *licensePages
	mcp          *mcpEndpoint
	legacy       *legacyAPI
	// explorer and asset serve /docs and its assets.
	explorer, asset fiber.Handler
	dash            *dashboard.Dashboard
	health          *health
}

// routes is the whole URL space on one screen: method, path, what it
// needs, handler. Registration order is matching order: a prefix's
// middleware (use) applies to every route listed after it under the
// prefix (also to unknown paths there, which is why scopes sit on
// prefixes), and a static path must come before a parameter that would
// match it (mount checks both, and refuses a table that breaks a rule).
func routes(x surfaces) []route {
	scope := requireScope
	const v1, ops = "/api/v1", "/api/ops/v1"
	dash := x.dash
	session := dash.RequireSession
	form := func(page fiber.Handler) []fiber.Handler {
		return []fiber.Handler{dash.CheckOrigin, dash.RequireSession, dash.CheckCSRF, page}
	}
	page := func(path string) string { return dashboard.Prefix + path }
	return []route{
		// Downloads: the signed link is the credential; listed before v1
		// so that its key authentication never sees them.
		get(billing.DownloadPath+":purchase_id", x.downloads.download),

		// REST v1: a bearer key, then the scope of each prefix or route.
		use(v1, x.edge.authenticate),
		use(v1+"/keys", scope(tenancy.ScopeKeysManage)),
		post(v1+"/keys", x.keys.createKey),
		get(v1+"/keys", x.keys.listKeys),
		del(v1+"/keys", x.keys.revokeKey),
		patch(v1+"/keys", x.keys.updateKey),
		get(v1+"/pricing", scope(tenancy.ScopePricingRead), x.clips.pricing),
		get(v1+"/balance", scope(tenancy.ScopeBrollBilling), x.purchases.balance),
		post(v1+"/broll/purchase", scope(tenancy.ScopeBrollPurchase), x.purchases.purchase),
		get(v1+"/broll/purchases", scope(tenancy.ScopeBrollBilling), x.purchases.listPurchases),
		get(v1+"/licenses/:license_id.pdf", scope(tenancy.ScopeBrollBilling), x.purchases.licensePDF),
		get(v1+"/licenses/:license_id", scope(tenancy.ScopeBrollBilling), x.purchases.license),
		use(v1+"/webhooks", scope(tenancy.ScopeWebhooksManage)), // root keys only
		post(v1+"/webhooks", x.webhooks.createWebhook),
		get(v1+"/webhooks", x.webhooks.listWebhooks),
		del(v1+"/webhooks", x.webhooks.deleteWebhook),
		get(v1+"/webhooks/:id/deliveries", x.webhooks.webhookDeliveries),
		post(v1+"/webhooks/:id/test", x.webhooks.pingWebhook),
		post(v1+"/webhooks/:id/rotate", x.webhooks.rotateWebhookSecret),
		post(v1+"/webhooks/:id/enable", x.webhooks.enableWebhook),
		post(v1+"/collections", scope(tenancy.ScopeBrollPurchase), x.collections.createCollection),
		get(v1+"/collections", scope(tenancy.ScopeBrollRead), x.collections.listCollections),
		get(v1+"/collections/:id", scope(tenancy.ScopeBrollRead), x.collections.getCollection),
		patch(v1+"/collections/:id", scope(tenancy.ScopeBrollPurchase), x.collections.updateCollection),
		del(v1+"/collections/:id", scope(tenancy.ScopeBrollPurchase), x.collections.deleteCollection),
		put(v1+"/collections/:id/items", scope(tenancy.ScopeBrollPurchase), x.collections.addCollectionItems),
		del(v1+"/collections/:id/items", scope(tenancy.ScopeBrollPurchase), x.collections.removeCollectionItem),
		get(v1+"/broll", scope(tenancy.ScopeBrollRead), x.clips.listBroll),
		get(v1+"/broll/filters", scope(tenancy.ScopeBrollRead), x.clips.brollFilters(&filterCache{})),
		get(v1+"/broll/:id", scope(tenancy.ScopeBrollRead), x.clips.getBroll),
		get(v1+"/broll/:id/similar", scope(tenancy.ScopeBrollRead), x.clips.similarBroll),

		// Ops: ops keys (catalog:write, which no customer or root key
		// holds), with the authentication, rate limit and usage counting
		// of v1.
		use(ops, x.edge.authenticate, scope(tenancy.ScopeCatalogWrite)),
		post(ops+"/videos", x.ops.opsImport),
		get(ops+"/videos/:id", x.ops.opsVideo),
		del(ops+"/videos/:id", x.ops.opsRetire),
		post(ops+"/uploads", x.uploads.createUpload),
		put(ops+"/uploads/:id", x.uploads.receiveUpload),

		// Licences: the public keys, terms and verify page need no key.
		get(licenseKeysPath, x.licensePages.licenseKeys),
		get(licenseTermsPath, x.licensePages.licenseTerms),
		get(licensePagePath+":license_id", x.licensePages.licenseVerify),

		// Public media: no key.
		get(previewsPath+":video_id", x.clips.publicMedia(catalog.MediaPreview)),
		get(thumbnailsPath+":video_id", x.clips.publicMedia(catalog.MediaThumbnail)),

		// MCP: a foreign Origin is refused first, CORS preflights (no key)
		// are answered before authentication, and JSON-RPC runs only for
		// requests authenticate admitted, so 401 is an HTTP answer as in
		// v1; a request over the rate limit is answered in JSON-RPC
		// (rateLimitInBand).
		all(mcpPath, x.mcp.checkOrigin, x.mcp.cors(), postOnly, x.mcp.rateLimitInBand, x.edge.authenticateReader, x.mcp.serve),

		// Legacy v0: its own shared secret, no key authentication, no rate
		// limit.
		use(legacyPrefix, x.legacy.guard),
		get(legacyPrefix, x.legacy.list),
		get(legacyPrefix+"/purchases", x.legacy.purchases),
		post(legacyPrefix+"/purchase", x.legacy.purchase),
		get(legacyPrefix+"/:id", x.legacy.details),

		// Docs: no key.
		get("/api/openapi.json", serveOpenAPI),
		get("/docs", x.explorer),
		get(migrationGuidePath, migrationGuide()),
		get(errorDocsPath, errorIndex),
		get(errorDocsPath+"/:code", errorPage),
		get("/docs/assets/:hash/:file", compress.New(), x.asset),
		get("/docs/:guide", guidesSite()), // after the fixed /docs paths, which it would otherwise take

		// Dashboard: HTML pages with their own sign-in; error pages and
		// security headers on every path, a session on every page behind
		// it, and on every form post the Origin, the session and a CSRF
		// token.
		use(dashboard.Prefix, dash.HandleErrors, dash.SecurityHeaders),
		get(page("/assets/:hash/:file"), dash.Asset),
		get(page("/sign-in"), dash.SignInForm),
		post(page("/sign-in"), dash.CheckOrigin, dash.CheckFormToken, dash.SignIn),
		get(page("/set-password"), dash.SetPasswordForm),
		post(page("/set-password"), dash.CheckOrigin, dash.CheckFormToken, dash.SetPassword),
		post(page("/sign-out"), form(dash.SignOut)...),
		post(page("/sign-out-everywhere"), form(dash.SignOutEverywhere)...),
		get(page("/"), session, dash.Overview),
		get(page("/keys"), session, dash.Keys),
		post(page("/keys"), form(dash.CreateRootKey)...),
		get(page("/keys/:id"), session, dash.RootKey),
		post(page("/keys/:id/customers"), form(dash.CreateCustomerKey)...),
		post(page("/keys/:id/limits"), form(dash.SetLimits)...),
		get(page("/keys/:id/revoke"), session, dash.RevokeForm),
		post(page("/keys/:id/revoke"), form(dash.RevokeKey)...),
		get(page("/purchases"), session, dash.Purchases),
		get(page("/purchases.csv"), session, dash.PurchasesCSV),
		get(page("/collections"), session, dash.CollectionsPage),
		get(page("/licenses/:license_id.pdf"), session, dash.LicensePDF),
		get(page("/balance"), session, dash.Balance),
		get(page("/credits"), dash.BalanceMoved),
		get(page("/webhooks"), session, dash.WebhooksPage),
		post(page("/webhooks/:id/enable"), form(dash.EnableWebhook)...),
		post(page("/webhooks/:id/disable"), form(dash.DisableWebhook)...),
		post(page("/webhooks/:id/delete"), form(dash.DeleteWebhook)...),
		use(dashboard.Prefix, dashboard.NotFound),

		// Probes: no key.
		get("/healthz", x.health.live),
		get("/readyz", x.health.ready),
	}
}
