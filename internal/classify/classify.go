// Package classify is the one place an error becomes what a client is told:
// its HTTP status, its code and its public message. REST (problem+json), MCP
// (tool error results) and the dashboard (error pages) all ask it, so the
// same failure reads the same on every surface.
package classify

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/redisx"
)

// Outcome is what a client may be told about an error.
type Outcome struct {
	Status int
	// Err carries the code, the public message and any structured fields.
	Err *apperr.Error
	// Known is false for errors of unknown origin: the client sees only
	// "internal", and the caller logs the error itself with the request id.
	Known bool
}

// Error classifies err. A database or Redis that cannot be reached (refused
// or dropped connections, a closed pool, a deadline passed while waiting on
// it) and a statement cancelled by its timeout are unavailable (503): worth
// a retry, not a server fault.
func Error(err error) Outcome {
	ae, known := appError(err)
	return Outcome{Status: Status(ae.Code), Err: ae, Known: known}
}

func appError(err error) (ae *apperr.Error, known bool) {
	var fe *fiber.Error
	switch {
	case errors.As(err, &ae):
		return ae, true
	case errors.As(err, &fe):
		return FromFiber(fe), true
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

// FromFiber converts fiber's own errors (unknown route, body limit, ...) so
// that every non-2xx response has the same shape.
func FromFiber(fe *fiber.Error) *apperr.Error {
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

// Status is the one place application error codes become HTTP statuses.
func Status(code apperr.Code) int {
	switch code {
	case apperr.Invalid, apperr.ConflictingSearch:
		return http.StatusBadRequest
	case apperr.Unauthorized:
		return http.StatusUnauthorized
	case apperr.InsufficientCredits, apperr.SpendLimitExceeded:
		return http.StatusPaymentRequired
	case apperr.InsufficientScope, apperr.Forbidden, apperr.LicenseRevoked:
		return http.StatusForbidden
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case apperr.IdempotencyKeyReused:
		return http.StatusUnprocessableEntity
	case apperr.Conflict, apperr.PriceChanged, apperr.IdempotencyKeyInUse, apperr.PreviewNotReady,
		apperr.UploadIncomplete, apperr.UploadClaimed, apperr.UploadClosed, apperr.NotEmbedded, apperr.LimitReached:
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

// RetryAfter is the Retry-After, in seconds, of a 503: what the error says
// (a timed-out query), else one second (a dependency restarting).
func RetryAfter(ae *apperr.Error) int {
	if secs, ok := ae.Fields["retry_after_seconds"].(int); ok && secs > 0 {
		return secs
	}
	return 1
}
