package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/internal/classify"
)

var titles = map[apperr.Code]string{
	apperr.Invalid:              "Invalid request",
	apperr.ConflictingSearch:    "Conflicting search parameters",
	apperr.Unauthorized:         "Unauthorized",
	apperr.InsufficientCredits:  "Insufficient balance",
	apperr.SpendLimitExceeded:   "Spend limit exceeded",
	apperr.IdempotencyKeyReused: "Idempotency key reused",
	apperr.IdempotencyKeyInUse:  "Idempotency key in use",
	apperr.PreviewNotReady:      "Preview not ready",
	apperr.UploadIncomplete:     "Upload incomplete",
	apperr.UploadClaimed:        "Upload claimed",
	apperr.UploadClosed:         "Upload closed",
	apperr.NotEmbedded:          "Not embedded yet",
	apperr.LimitReached:         "Limit reached",
	apperr.InsufficientScope:    "Insufficient scope",
	apperr.Forbidden:            "Forbidden",
	apperr.LicenseRevoked:       "Licence revoked",
	apperr.NotFound:             "Not found",
	apperr.MethodNotAllowed:     "Method not allowed",
	apperr.Conflict:             "Conflict",
	apperr.PriceChanged:         "Price changed",
	apperr.Sunset:               "Sunset",
	apperr.PayloadTooLarge:      "Payload too large",
	apperr.UnsupportedMedia:     "Unsupported media type",
	apperr.RateLimited:          "Rate limited",
	apperr.RangeUnsatisfiable:   "Range not satisfiable",
	apperr.Internal:             "Internal error",
	apperr.Unavailable:          "Service unavailable",
}

// errorHandler renders every error as application/problem+json (RFC 9457).
// Errors of unknown origin are logged with the request id and shown only as
// "internal error": no SQL, stack or secret reaches a client.
func errorHandler(logger *slog.Logger, baseURL string) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		if clientLeft(c, err) {
			// Nobody reads this answer. 499 keeps it out of the 5xx
			// figures and the error log, where it is no server's fault.
			c.Status(StatusClientClosedRequest)
			return nil
		}
		out := classify.Error(err)
		ae := out.Err
		if !out.Known {
			logger.Error("request failed", "request_id", requestID(c), "method", c.Method(),
				"path", c.Path(), "error", err.Error())
		}
		if ae.Code == apperr.Unavailable {
			logger.Warn("unavailable", "request_id", requestID(c), "path", c.Path(), "error", err.Error())
		}
		return writeProblem(c, baseURL, ae)
	}
}

// writeProblem renders ae; its type is the code's page under baseURL.
func writeProblem(c *fiber.Ctx, baseURL string, ae *apperr.Error) error {
	status := classify.Status(ae.Code)
	// Errors the server raises before any middleware ran (a body over the
	// limit, headers too large) get an id here, so every problem has one.
	if requestID(c) == "" {
		assignRequestID(c)
	}
	body := fiber.Map{
		"type":       problemType(baseURL, ae.Code),
		"title":      titles[ae.Code],
		"status":     status,
		"detail":     ae.Message,
		"code":       string(ae.Code),
		"request_id": requestID(c),
	}
	if ae.Field != "" {
		body["field"] = ae.Field
	}
	for k, v := range ae.Fields {
		if _, taken := body[k]; !taken {
			body[k] = v
		}
	}
	if status == http.StatusUnauthorized {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="broll"`)
	}
	if status == http.StatusServiceUnavailable {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(classify.RetryAfter(ae)))
	}
	// A 429 (rate limited) and a 409 that passes with time (not_embedded)
	// say when to come back.
	if secs, ok := ae.Fields["retry_after_seconds"].(int); ok &&
		(status == http.StatusTooManyRequests || status == http.StatusConflict) &&
		len(c.Response().Header.Peek(fiber.HeaderRetryAfter)) == 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	}
	c.Status(status)
	if err := c.JSON(body); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/problem+json")
	return nil
}

// StatusClientClosedRequest is the status recorded (in the access log and
// the request metrics) for a request whose client closed its connection
// before the answer was ready: nginx's 499. No client ever receives it.
const StatusClientClosedRequest = 499

// clientLeft reports whether err is the request's own context ending
// because its client closed the connection (cancelOnDisconnect).
func clientLeft(c *fiber.Ctx, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(c.UserContext().Err(), context.Canceled)
}
