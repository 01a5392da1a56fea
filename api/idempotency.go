package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/internal/idempotency"
)

// idempotent runs do, the handler's action on req, once per
// Idempotency-Key of the calling key: the first request runs and its
// answer is stored; a retry of the same request gets that answer again with
// Idempotent-Replayed: true, and nothing runs twice. req is the request as
// the handler acts on it, already decoded and validated: the fingerprint
// that says "the same request" is taken over it (requestFingerprint), so
// two bodies are one request exactly when the handler would do the same
// with them, however their members are ordered, spelt or spaced, and a
// body refused as invalid never reaches here, claims no key and can be
// corrected and sent again under the same key. Server errors (5xx), and
// requests whose client left before their answer (499), are not stored:
// the key is released and a retry runs anew (a purchase retried so
// is still charged once: a key owns a clip once). The answer is kept
// sealed; one over idempotency.MaxBody is not kept, and a retry gets 409
// conflict rather than a second run.
func (s *replayer) idempotent(c *fiber.Ctx, req any, do func() error) error {
	key := c.Get("Idempotency-Key")
	if key == "" {
		return do()
	}
	if !idempotency.Valid(key) {
		return apperr.InvalidField("Idempotency-Key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	hash, err := requestFingerprint(c.Method(), c.Route().Path, req)
	if err != nil {
		return err
	}
	p := principal(c)
	claim, stored, err := s.idem.Begin(c.UserContext(), p.KeyID, key, hash)
	if err != nil {
		return err
	}
	if stored != nil {
		c.Set("Idempotent-Replayed", "true")
		if !stored.Kept {
			return apperr.New(apperr.Conflict,
				"the first request with this Idempotency-Key finished (status %d) but its answer was not kept, so it cannot be replayed; it will not run again: look its result up instead, and use a new key only for a new request",
				stored.Status).With("original_status", stored.Status)
		}
		if stored.ContentType != "" {
			c.Set(fiber.HeaderContentType, stored.ContentType)
		}
		return c.Status(stored.Status).Send(stored.Body)
	}
	// The claim is settled whatever becomes of the request, with a context
	// of its own: a client that left must not leave the key blocked.
	settle, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), 10*time.Second)
	defer cancel()
	if err := do(); err != nil {
		if herr := c.App().ErrorHandler(c, err); herr != nil {
			_ = claim.Release(settle)
			return herr
		}
	}
	status := c.Response().StatusCode()
	if status >= 500 || status == StatusClientClosedRequest {
		if err := claim.Release(settle); err != nil {
			s.logger.Warn("idempotency key not released", "request_id", requestID(c), "error", err.Error())
		}
		return nil
	}
	resp := idempotency.Response{Status: status, ContentType: string(c.Response().Header.ContentType()),
		Body: bytes.Clone(c.Response().Body())}
	if err := claim.Finish(settle, resp); err != nil {
		// The answer stands, unkept: the claim's lock is let go, so a retry
		// runs the request anew (a purchase retried so is charged once).
		s.logger.Warn("idempotent response not stored", "request_id", requestID(c), "error", err.Error())
	}
	return nil
}

// requestFingerprint names a request for its Idempotency-Key: its method,
// route and req, the decoded and validated request, encoded as JSON.
// encoding/json writes a struct's fields in their declared order, a
// map's keys sorted, and each value in one spelling (a UUID in lower case,
// an amount as cents in dollars), so equal requests encode alike and
// different ones differ.
func requestFingerprint(method, route string, req any) ([]byte, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("idempotency fingerprint: %w", err)
	}
	return idempotency.Hash(method, route, b), nil
}
