package api

import (
	"net/url"

	"github.com/gofiber/fiber/v2"
)

// queryValues is the request's query as the paging parser reads it, decoded
// as fiber's c.Query decodes it (first value first), so that a list's
// paging and its filters read the same query string.
func queryValues(c *fiber.Ctx) url.Values {
	v := url.Values{}
	for k, val := range c.Context().QueryArgs().All() {
		v.Add(string(k), string(val))
	}
	return v
}
