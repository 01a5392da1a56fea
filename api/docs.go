package api

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"io/fs"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"

	"broll/docs"
	"broll/internal/apperr"
)

// The /docs explorer is Swagger UI over /api/openapi.json, with every asset
// embedded in the binary (docsui/README.md says where they come from), so it
// works on a machine with no internet access.
//
//go:embed docsui/explorer.html docsui/explorer.js docsui/explorer.css docsui/swagger-ui
var docsUI embed.FS

// docsCSP lets the explorer load only from this origin: a page that tried
// to reach a CDN would fail here as it would offline. Swagger UI sets
// inline styles and shows data: images, hence those two allowances.
const docsCSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
	"script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// docsSite serves the explorer page, which links the guides, and its
// assets, under a path that carries their hash. None of the docs routes
// needs a key.
func docsSite() (explorer, asset fiber.Handler, err error) {
	// The files served under /docs/assets/<hash>/ and their place in
	// docsUI; nothing else of the folder is served.
	files := [][2]string{
		{"explorer.css", "docsui/explorer.css"},
		{"explorer.js", "docsui/explorer.js"},
		{"favicon-32x32.png", "docsui/swagger-ui/favicon-32x32.png"},
		{"swagger-ui-bundle.js", "docsui/swagger-ui/swagger-ui-bundle.js"},
		{"swagger-ui.css", "docsui/swagger-ui/swagger-ui.css"},
	}
	assets := make(map[string][]byte, len(files))
	h := sha256.New()
	for _, f := range files {
		b, err := fs.ReadFile(docsUI, f[1])
		if err != nil {
			return nil, nil, fmt.Errorf("api: embedded explorer asset missing: %w", err)
		}
		assets[f[0]] = b
		h.Write([]byte(f[0]))
		h.Write(b)
	}
	// The asset URLs carry a hash of the assets, so browsers may keep them
	// forever and still never run an old explorer.js with a new bundle.
	base := "/docs/assets/" + hex.EncodeToString(h.Sum(nil))[:12]
	page, err := fs.ReadFile(docsUI, "docsui/explorer.html")
	if err != nil {
		return nil, nil, fmt.Errorf("api: embedded explorer page missing: %w", err)
	}
	page = bytes.ReplaceAll(page, []byte("{{assets}}"), []byte(base))
	page = bytes.ReplaceAll(page, []byte("{{guides}}"), []byte(guideLinks(docs.Guides())))
	explorer = func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentSecurityPolicy, docsCSP)
		c.Set(fiber.HeaderCacheControl, "no-cache")
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		return c.Send(page)
	}
	asset = func(c *fiber.Ctx) error {
		b, ok := assets[c.Params("file")]
		if !ok || base != "/docs/assets/"+c.Params("hash") {
			return apperr.NotFoundf("no such asset")
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		c.Type(strings.TrimPrefix(path.Ext(c.Params("file")), "."))
		return c.Send(b)
	}
	return explorer, asset, nil
}

// guidePage serves a Markdown guide: as Markdown to tools, and wrapped in a
// minimal page to browsers, which would otherwise download it. The page
// runs no script and loads nothing, and its CSP says so.
func guidePage(title string, text []byte) fiber.Handler {
	page := []byte(`<!doctype html><html lang="en"><head><meta charset="utf-8">` +
		`<title>` + html.EscapeString(title) + `</title>` +
		`<style>body{max-width:52em;margin:2em auto;padding:0 1em}pre{white-space:pre-wrap;font:15px/1.5 monospace}</style>` +
		`</head><body><p><a href="/docs">API explorer and guides</a></p><pre>` + html.EscapeString(string(text)) + `</pre></body></html>`)
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		c.Vary(fiber.HeaderAccept)
		if c.Accepts("text/markdown", "text/plain", "text/html") != "text/html" {
			c.Set(fiber.HeaderContentType, "text/markdown; charset=utf-8")
			return c.Send(text)
		}
		c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'")
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		return c.Send(page)
	}
}

// migrationGuide serves docs/migration.md, the page every legacy
// response's Link header names.
func migrationGuide() fiber.Handler {
	return guidePage("Migrating from the legacy v0 API to v1", docs.Migration)
}

// guidesSite serves each reference page of docs/ at /docs/<name>, the
// pages the README links to; any other name is 404.
func guidesSite() fiber.Handler {
	guides := docs.Guides()
	pages := make(map[string]fiber.Handler, len(guides))
	for _, g := range guides {
		pages[g.Name] = guidePage(g.Title, g.Text)
	}
	return func(c *fiber.Ctx) error {
		page, ok := pages[c.Params("guide")]
		if !ok {
			return apperr.NotFoundf("no such guide; /docs lists them")
		}
		return page(c)
	}
}

// guideLinks are the explorer header's links to the guides.
func guideLinks(guides []docs.Guide) string {
	links := make([]string, 0, len(guides))
	for _, g := range guides {
		links = append(links, `<a href="/docs/`+html.EscapeString(g.Name)+`">`+html.EscapeString(g.Title)+`</a>`)
	}
	return strings.Join(links, " &middot;\n    ")
}
