package api

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/internal/idempotency"
)

// idempotent answers a request carrying an Idempotency-Key once: the first
// runs and its answer is stored; a retry with the same body gets that
// answer again with Idempotent-Replayed: true, and nothing runs twice.
// Server errors (5xx) are not stored: the key is released and a retry runs
// anew (a purchase retried so is still charged once: a key owns a clip once).
// The answer is kept sealed; one over idempotency.MaxBody is not kept, and
// a retry gets 409 conflict rather than a second run.
func (s *server) idempotent(c *fiber.Ctx) error {
	key := c.Get("Idempotency-Key")
	if key == "" {
		return c.Next()
	}
	if !idempotency.Valid(key) {
		return apperr.InvalidField("Idempotency-Key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	p := principal(c)
	hash := idempotency.Hash(c.Method(), c.Route().Path, canonicalBody(c.Body()))
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
	if err := c.Next(); err != nil {
		if herr := c.App().ErrorHandler(c, err); herr != nil {
			_ = claim.Release(settle)
			return herr
		}
	}
	status := c.Response().StatusCode()
	if status >= 500 {
		if err := claim.Release(settle); err != nil {
			s.logger.Warn("idempotency key not released", "request_id", requestID(c), "error", err.Error())
		}
		return nil
	}
	resp := idempotency.Response{Status: status, ContentType: string(c.Response().Header.ContentType()),
		Body: bytes.Clone(c.Response().Body())}
	if err := claim.Finish(settle, resp); err != nil {
		// The answer stands; a retry will wait for the claim to go stale.
		s.logger.Warn("idempotent response not stored", "request_id", requestID(c), "error", err.Error())
	}
	return nil
}

// canonicalBody is the body as the request means it: JSON re-encoded with
// sorted keys and no spacing, so that a retry that formats the same body
// differently is still the same request. Anything else is taken as it is.
func canonicalBody(b []byte) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}
