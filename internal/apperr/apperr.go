// Package apperr is the one application error type. Domain packages return
// *Error with a stable code; the HTTP layer maps codes to statuses in exactly
// one place and the CLI prints the message.
package apperr

import (
	"errors"
	"fmt"
)

// Code is a stable snake_case identifier that clients may branch on.
type Code string

// The codes in use. The Errors section of docs/api.md documents each one.
const (
	Invalid             Code = "invalid_request"
	ConflictingSearch   Code = "conflicting_search_params"
	Unauthorized        Code = "unauthorized"
	InsufficientCredits Code = "insufficient_credits"
	SpendLimitExceeded  Code = "spend_limit_exceeded"
	InsufficientScope   Code = "insufficient_scope"
	Forbidden           Code = "forbidden"
	NotFound            Code = "not_found"
	MethodNotAllowed    Code = "method_not_allowed"
	Conflict            Code = "conflict"
	PriceChanged        Code = "price_changed"
	Sunset              Code = "sunset"
	PayloadTooLarge     Code = "payload_too_large"
	UnsupportedMedia    Code = "unsupported_media_type"
	RangeUnsatisfiable  Code = "range_not_satisfiable"
	RateLimited         Code = "rate_limited"
	// IdempotencyKeyReused: an Idempotency-Key seen before with another
	// request (422); IdempotencyKeyInUse: its first request still runs (409).
	IdempotencyKeyReused Code = "idempotency_key_reused"
	IdempotencyKeyInUse  Code = "idempotency_key_in_use"
	// PreviewNotReady: a test purchase's link serves the clip's preview,
	// and the clip has none yet (409); never the full-quality file instead.
	PreviewNotReady Code = "preview_not_ready"
	// LicenseRevoked: the download link of a purchase whose licence was
	// revoked (403): its file is no longer delivered.
	LicenseRevoked Code = "license_revoked"
	// Uploads (409): an import names an upload whose file has not all
	// arrived (UploadIncomplete) or that another clip took (UploadClaimed);
	// a PUT reaches an upload that has its file already (UploadClosed).
	UploadIncomplete Code = "upload_incomplete"
	UploadClaimed    Code = "upload_claimed"
	UploadClosed     Code = "upload_closed"
	Internal         Code = "internal"
	Unavailable      Code = "unavailable"

	// LimitReached: a key's collections or a collection's clips would pass
	// their cap (409).
	LimitReached Code = "limit_reached"

	// NotEmbedded: "more like this" of a clip whose vector is not ready,
	// or was made by another model than the current one (409, with
	// Retry-After).
	NotEmbedded Code = "not_embedded"
)

// Error is an error meant to be shown to a client: Message is safe to
// display, Fields carry structured extras (required_scope, available, ...).
type Error struct {
	Code    Code
	Message string
	Field   string
	Fields  map[string]any
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// With returns a copy of e carrying an extra structured field.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Fields = make(map[string]any, len(e.Fields)+1)
	for k, v := range e.Fields {
		c.Fields[k] = v
	}
	c.Fields[key] = value
	return &c
}

// New builds an error with a formatted message. A value the client sent
// goes into it through Clip; the message as a whole is cut at MaxDetail
// characters all the same, so that no error can grow with its input.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: clip(fmt.Sprintf(format, args...), MaxDetail)}
}

// InvalidField reports a bad value of one named input field. The field's
// name may be the client's own (an unknown member): it is cut by Clip.
func InvalidField(field, format string, args ...any) *Error {
	return &Error{Code: Invalid, Field: Clip(field), Message: clip(fmt.Sprintf(format, args...), MaxDetail)}
}

// NotFoundf reports a missing resource without saying whose it is.
func NotFoundf(format string, args ...any) *Error {
	return New(NotFound, format, args...)
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// CodeOf returns the code of err, or Internal for errors of unknown origin.
func CodeOf(err error) Code {
	if e, ok := As(err); ok {
		return e.Code
	}
	return Internal
}
