package outbox

import (
	"context"

	"broll/internal/telemetry"
)

// Trace is the W3C traceparent of the span ctx carries (the request that is
// writing events, or the job that is), "" for none: each event records it,
// and its deliveries are spans of the same trace. Writers store "" as NULL
// (nullif in their statements).
func Trace(ctx context.Context) string { return telemetry.Traceparent(ctx) }
