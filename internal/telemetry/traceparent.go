package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Traceparent is the W3C traceparent of the span ctx carries ("" when it
// carries none): what a queued job or an outbox row keeps so that the work
// done for it later, on any node, continues the same trace. With tracing
// off it is the caller's incoming context, when there was one.
func Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	Propagator().Inject(ctx, c)
	return c["traceparent"]
}

// FromTraceparent returns ctx carrying the remote span context of a W3C
// traceparent, the parent of the spans started under it; a malformed or
// empty one leaves ctx as it is.
func FromTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return Propagator().Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
