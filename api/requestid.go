package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
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

// traceID is the trace id of the request's span (tracing), or of its
// incoming traceparent with tracing off; "" for none. A traceparent that
// breaks the W3C format is ignored, as the recommendation has a receiver do.
func traceID(c *fiber.Ctx) string {
	sc := trace.SpanContextFromContext(c.UserContext())
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
