package api

import (
	"net/url"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/catalog/search"
	"broll/internal/apperr"
)

// similarBroll is GET /api/v1/broll/{id}/similar, "more like this": the
// list of GET /api/v1/broll with the clip's own vector as the query, the
// clip left out (search.Query.SimilarTo).
func (s *clipsAPI) similarBroll(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.InvalidField("id", "video id %q is not a UUID", apperr.Clip(c.Params("id")))
	}
	if err := search.CheckSimilarTo(id); err != nil {
		return err
	}
	values, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return apperr.New(apperr.Invalid, "malformed query string")
	}
	q, err := parseBrollQueryOn(values, search.Query{SimilarTo: id})
	if err != nil {
		return err
	}
	_, out, err := s.searchBroll(c.UserContext(), c, q)
	if err != nil {
		return err
	}
	return c.JSON(out)
}
