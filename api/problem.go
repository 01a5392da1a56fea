package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/redisx"
)

// statusOf is the one place application error codes become HTTP statuses.
func statusOf(code apperr.Code) int {
	switch code {
	case apperr.Invalid, apperr.ConflictingSearch:
		return http.StatusBadRequest
	case apperr.Unauthorized:
		return http.StatusUnauthorized
	case apperr.InsufficientCredits, apperr.SpendLimitExceeded:
		return http.StatusPaymentRequired
	case apperr.InsufficientScope, apperr.Forbidden:
		return http.StatusForbidden
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case apperr.IdempotencyKeyReused:
		return http.StatusUnprocessableEntity
	case apperr.Conflict, apperr.PriceChanged, apperr.IdempotencyKeyInUse, apperr.PreviewNotReady:
		return http.StatusConflict
	case apperr.Sunset:
		return http.StatusGone
	case apperr.PayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case apperr.UnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case apperr.RateLimited:
		return http.StatusTooManyRequests
	case apperr.RangeUnsatisfiable:
		return http.StatusRequestedRangeNotSatisfiable
	case apperr.Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

var titles = map[apperr.Code]string{
	apperr.Invalid:              "Invalid request",
	apperr.ConflictingSearch:    "Conflicting search parameters",
	apperr.Unauthorized:         "Unauthorized",
	apperr.InsufficientCredits:  "Insufficient credits",
	apperr.SpendLimitExceeded:   "Spend limit exceeded",
	apperr.IdempotencyKeyReused: "Idempotency key reused",
	apperr.IdempotencyKeyInUse:  "Idempotency key in use",
	apperr.PreviewNotReady:      "Preview not ready",
	apperr.InsufficientScope:    "Insufficient scope",
	apperr.Forbidden:            "Forbidden",
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

// fromFiber converts fiber's own errors (unknown route, body limit, ...) so
// that every non-2xx response in the app has the same shape.
func fromFiber(fe *fiber.Error) *apperr.Error {
	switch fe.Code {
	case http.StatusNotFound:
		return apperr.NotFoundf("no such route")
	case http.StatusMethodNotAllowed:
		return apperr.New(apperr.NotFound, "method not allowed on this route")
	case http.StatusRequestEntityTooLarge:
		return apperr.New(apperr.PayloadTooLarge, "request body is too large")
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return apperr.New(apperr.Invalid, "malformed request")
	case http.StatusServiceUnavailable:
		return apperr.New(apperr.Unavailable, "service unavailable")
	default:
		if fe.Code >= 400 && fe.Code < 500 {
			return apperr.New(apperr.Invalid, "%s", http.StatusText(fe.Code))
		}
		return apperr.New(apperr.Internal, "internal error")
	}
}

// appError finds what a client may be told about err. Errors of unknown
// origin (known false) become "internal"; callers log them.
func appError(err error) (ae *apperr.Error, known bool) {
	var fe *fiber.Error
	switch {
	case errors.As(err, &ae):
		return ae, true
	case errors.As(err, &fe):
		return fromFiber(fe), true
	case database.IsInvalidText(err):
		// A client's text that no parser checked and Postgres refused: the
		// client's mistake, not ours.
		return apperr.New(apperr.Invalid, "text must be valid UTF-8 without NUL characters"), true
	case database.IsTimeout(err):
		// The statement timeout fired: the request was too costly for the
		// moment. Retrying later may work; it is not the server failing.
		return database.TimeoutError, true
	case database.IsUnavailable(err) || redisx.IsUnavailable(err):
		// A dependency is down or restarting: worth a retry, not a 500.
		return apperr.New(apperr.Unavailable, "a backing service is unavailable; retry shortly"), true
	}
	return apperr.New(apperr.Internal, "internal error; quote the request id when reporting it"), false
}

// errorHandler renders every error as application/problem+json (RFC 9457).
// Errors of unknown origin are logged with the request id and shown only as
// "internal error": no SQL, stack or secret reaches a client.
func errorHandler(logger *slog.Logger, baseURL string) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		ae, known := appError(err)
		if !known {
			logger.Error("request failed", "request_id", requestID(c), "method", c.Method(),
				"path", c.Path(), "error", err.Error())
		}
		if ae.Code == apperr.Unavailable {
			logger.Warn("unavailable", "request_id", requestID(c), "path", c.Path(), "error", err.Error())
		}
		return writeProblem(c, baseURL, ae)
	}
}

// retryAfterUnavailable is the Retry-After of a 503: what the error says
// (a timed-out query), else one second (a dependency restarting).
func retryAfterUnavailable(ae *apperr.Error) int {
	if secs, ok := ae.Fields["retry_after_seconds"].(int); ok && secs > 0 {
		return secs
	}
	return 1
}

// writeProblem renders ae; its type is the code's page under baseURL.
func writeProblem(c *fiber.Ctx, baseURL string, ae *apperr.Error) error {
	status := statusOf(ae.Code)
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
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retryAfterUnavailable(ae)))
	}
	if secs, ok := ae.Fields["retry_after_seconds"].(int); ok && status == http.StatusTooManyRequests &&
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
