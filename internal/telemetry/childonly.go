package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// childOnly is a tracer provider whose tracers start a span only within a
// recording one: instrumentation that would otherwise start a trace of
// its own for every background call (a Redis command of a periodic flush)
// records only the calls made for traced work.
type childOnly struct{ trace.TracerProvider }

func (p childOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childOnlyTracer{p.TracerProvider.Tracer(name, opts...)}
}

type childOnlyTracer struct{ trace.Tracer }

func (t childOnlyTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return t.Tracer.Start(ctx, name, opts...)
}
