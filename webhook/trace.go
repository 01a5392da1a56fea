package webhook

import (
	"crypto/rand"
	"encoding/hex"
)

// traceparent continues the trace of the request that wrote an event: the
// same trace id, a new span id for this attempt, sampled.
func traceparent(traceID string) string {
	var span [8]byte
	_, _ = rand.Read(span[:]) // crypto/rand.Read never fails
	return "00-" + traceID + "-" + hex.EncodeToString(span[:]) + "-01"
}
