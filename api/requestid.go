package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/outbox"
)

const (
	localRequestID = "request_id"
	localTraceID   = "trace_id"
)

// withRequestID gives every request an id, returned in X-Request-Id and in
// every problem body, and used in logs. A well-formed incoming id is kept so
// that a load balancer's id follows the request. The trace id of a W3C
// traceparent header is kept too, for the access log, so that a request
// can be found from the caller's trace, and in the request's context, so
// that the webhook events it writes are delivered within the same trace.
func withRequestID(c *fiber.Ctx) error {
	assignRequestID(c)
	if id, ok := parseTraceparent(c.Get("traceparent")); ok {
		c.Locals(localTraceID, id)
		c.SetUserContext(outbox.WithTrace(c.UserContext(), id))
	}
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

// traceID is the trace id of the request's traceparent, "" without one.
func traceID(c *fiber.Ctx) string {
	id, _ := c.Locals(localTraceID).(string)
	return id
}

// parseTraceparent returns the trace id of a W3C Trace Context traceparent
// ("00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>"). A header that
// does not follow the format, or carries the all-zero ids the format
// declares invalid, is ignored, as the recommendation has a receiver do.
// Later versions may append fields after the flags; version ff is invalid.
func parseTraceparent(h string) (string, bool) {
	parts := strings.Split(strings.TrimSpace(h), "-")
	if len(parts) < 4 || (parts[0] == "00" && len(parts) != 4) || parts[0] == "ff" {
		return "", false
	}
	version, trace, parent, flags := parts[0], parts[1], parts[2], parts[3]
	if !lowerHex(version, 2) || !lowerHex(trace, 32) || !lowerHex(parent, 16) || !lowerHex(flags, 2) ||
		strings.Trim(trace, "0") == "" || strings.Trim(parent, "0") == "" {
		return "", false
	}
	return trace, true
}

// lowerHex reports whether s is n lower-case hexadecimal digits.
func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
