package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

const localRequestID = "request_id"

// withRequestID gives every request an id, returned in X-Request-Id and in
// every problem body, and used in logs. A well-formed incoming id is kept so
// that a load balancer's id follows the request.
func withRequestID(c *fiber.Ctx) error {
	assignRequestID(c)
	return c.Next()
}

func assignRequestID(c *fiber.Ctx) {
	id := c.Get(fiber.HeaderXRequestID)
	if len(id) < 8 || len(id) > 64 || !printableASCII(id) {
		id = uuid.NewString()
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
}

func requestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(localRequestID).(string); ok {
		return id
	}
	return ""
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
