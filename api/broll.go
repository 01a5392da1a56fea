package api

import "github.com/gofiber/fiber/v2"

// catalogRoutes registers the catalog routes of v1 (list/search, filters,
// details). Static paths are registered before /broll/:id.
func (s *server) catalogRoutes(v1 fiber.Router) {}

// opsRoutes registers the content-operations routes (ops keys).
func (s *server) opsRoutes(app *fiber.App) {}
