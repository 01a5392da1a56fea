package brollclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Codes of the API's errors (the `code` of its problem+json bodies) that a
// program usually branches on; docs/api.md lists them all.
const (
	CodeInvalidRequest         = "invalid_request"
	CodeUnauthorized           = "unauthorized"
	CodeInsufficientCredits    = "insufficient_credits"
	CodeInsufficientScope      = "insufficient_scope"
	CodeSpendLimitExceeded     = "spend_limit_exceeded"
	CodeNotFound               = "not_found"
	CodePriceChanged           = "price_changed"
	CodeIdempotencyKeyReused   = "idempotency_key_reused"
	CodeIdempotencyKeyInUse    = "idempotency_key_in_use"
	CodeRateLimited            = "rate_limited"
	CodeUnavailable            = "unavailable"
	CodeInternal               = "internal"
	codeUnexpectedResponseBody = "unexpected_response"
)

// Error is an error answer of the API (RFC 9457 problem details), typed by
// its stable Code. Use errors.As to get it from any method of Broll:
//
//	var apiErr *brollclient.Error
//	if errors.As(err, &apiErr) && apiErr.Code == brollclient.CodeInsufficientCredits { ... }
type Error struct {
	Status    int    // the HTTP status
	Code      string // stable snake_case code, e.g. "insufficient_credits"
	Title     string
	Detail    string // for people; do not parse
	Type      string // URL of the page that explains the code
	RequestID string // quote it to support
	// Retryable says whether the same request may succeed later (rate
	// limited, unavailable, an idempotent request still running). Broll
	// has already retried it MaxRetries times when you see it.
	Retryable bool
	// RetryAfter is the server's Retry-After, zero when it sent none.
	RetryAfter time.Duration
	// Members holds every member of the body, e.g. "required" and
	// "available" (dollars) of insufficient_credits.
	Members map[string]any
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("broll: %d %s", e.Status, e.Code)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.RequestID != "" {
		msg += " (request " + e.RequestID + ")"
	}
	return msg
}

// retryableStatus are the answers a client retries: too many requests,
// and a node that is briefly unable to answer.
func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// errorFrom builds the Error of a non-2xx response from its body; a body
// that is not problem+json still gives an Error with the status.
func errorFrom(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header)}
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		e.Members = m
		e.Code, _ = m["code"].(string)
		e.Title, _ = m["title"].(string)
		e.Detail, _ = m["detail"].(string)
		e.Type, _ = m["type"].(string)
		e.RequestID, _ = m["request_id"].(string)
	}
	if e.Code == "" {
		e.Code = codeUnexpectedResponseBody
		e.Detail = http.StatusText(resp.StatusCode)
	}
	e.Retryable = retryableStatus(resp.StatusCode) || e.Code == CodeIdempotencyKeyInUse
	return e
}

// retryAfter reads Retry-After in seconds or as an HTTP date; 0 when absent.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
