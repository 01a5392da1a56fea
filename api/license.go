package api

import (
	"bytes"
	_ "embed"
	"html/template"
	"strings"

	"github.com/gofiber/fiber/v2"

	"broll/billing/license"
	"broll/internal/apperr"
)

// License paths: the public keys, the public verify page and the terms
// have no key; the holder's document and certificate are under v1.
const (
	licenseKeysPath  = "/.well-known/broll-license-keys.json"
	licensePagePath  = "/licenses/"
	licenseTermsPath = "/licenses/terms"
)

// licenseKeys serves the JWKS: any origin may read it, and caches may keep
// it for an hour (a rotation adds a key before it signs with it).
func (s *licensePages) licenseKeys(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/jwk-set+json")
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Send(s.licenses.Keys().JWKS())
}

// licenseVerify is the public page of a licence: HTML for people, the
// signed public document for Accept: application/json. It is limited per
// client address; an unknown or malformed id costs the lookup and the
// signature a known one does (license.Service.Public) and is 404.
func (s *licensePages) licenseVerify(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if err := s.licenseLookups.Allow(ctx, s.clientAddr(c)); err != nil {
		return err
	}
	signed, err := s.licenses.Public(ctx, c.Params("license_id"))
	wantsJSON := c.Accepts(fiber.MIMETextHTML, fiber.MIMEApplicationJSON) == fiber.MIMEApplicationJSON
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Vary(fiber.HeaderAccept)
	if wantsJSON || (err != nil && apperr.CodeOf(err) != apperr.NotFound) {
		if err != nil {
			return err
		}
		return c.JSON(signed)
	}
	var page bytes.Buffer
	data := licensePageData{Signed: signed, Found: err == nil, KeysURL: s.baseURL + licenseKeysPath}
	if err := licensePage.Execute(&page, data); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	if !data.Found {
		c.Status(fiber.StatusNotFound)
	}
	return c.Send(page.Bytes())
}

// licenseTerms serves the licence terms the documents name (unless
// BROLL_LICENSE_TERMS_URL points elsewhere).
func (s *licensePages) licenseTerms(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return sendErrorPage(c, "Licence terms · B-roll", licenseTermsHTML)
}

// license returns the holder's signed document (the purchase's key or its
// root); any other key gets 404, as for an unknown id.
func (s *purchasesAPI) license(c *fiber.Ctx) error {
	signed, err := s.licenses.Get(c.UserContext(), principal(c), c.Params("license_id"))
	if err != nil {
		return err
	}
	return c.JSON(signed)
}

// licensePDF returns the holder's one-page certificate.
func (s *purchasesAPI) licensePDF(c *fiber.Ctx) error {
	pdf, name, err := s.licenses.CertificateFor(c.UserContext(), principal(c), c.Params("license_id"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/pdf")
	c.Set(fiber.HeaderContentDisposition, `inline; filename="`+name+`"`)
	return c.Send(pdf)
}

type licensePageData struct {
	license.Signed
	Found   bool
	KeysURL string
}

//go:embed license_page.html
var licensePageHTML string

var licensePage = template.Must(template.New("license").Funcs(template.FuncMap{
	"upper": strings.ToUpper,
}).Parse(licensePageHTML))

//go:embed license_terms.html
var licenseTermsHTML string
