package outbox

import "context"

type traceKey struct{}

// WithTrace returns ctx carrying the W3C trace id (32 lowercase hex digits)
// of the request that is about to write events, so that each event records
// it and its deliveries continue the caller's trace (a traceparent header
// with the same trace id).
func WithTrace(ctx context.Context, traceID string) context.Context {
	return context.WithValue(ctx, traceKey{}, traceID)
}

// Trace is the trace id WithTrace put in ctx, "" for none. Writers store ""
// as NULL (nullif in their statements).
func Trace(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}
