package api

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// openapiJSON is the OpenAPI 3.1 description of every route of this app,
// a plain JSON file kept up to date with the handlers: change both in one
// commit. openapi_test.go keeps it honest (every registered route must
// appear in it, and real responses must validate against it), and
// `make lint` runs the Redocly linter over it.
//
//go:embed openapi.json
var openapiJSON []byte

// serveOpenAPI serves the document. Any origin may read it, so that client
// generators and hosted viewers can fetch it straight from a deployment.
func serveOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.Send(openapiJSON)
}
