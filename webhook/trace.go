package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/telemetry"
)

// An attempt is a span of the trace of the request (or job) that wrote its
// event: the event keeps that span's traceparent (rows of earlier releases
// keep its trace id alone), the attempt's span is its child, and the
// receiver gets the attempt's traceparent, so that its logs join the
// caller's trace. With tracing off the receiver still gets the event's
// trace id, under a new span id for the attempt.

// traceIDOf is the trace id of what an event keeps, "" for none.
func traceIDOf(stored string) string {
	if len(stored) == 32 {
		return stored
	}
	if len(stored) == 55 {
		return stored[3:35]
	}
	return ""
}

// startAttempt starts the span of one attempt to deliver c.
func (d *Deliverer) startAttempt(ctx context.Context, c claimed) (context.Context, trace.Span) {
	if !d.tracing {
		return ctx, trace.SpanFromContext(ctx)
	}
	parent := c.trace
	if len(parent) == 32 {
		parent = traceparent(parent)
	}
	ctx = telemetry.FromTraceparent(ctx, parent)
	ctx, span := d.tracer.Start(ctx, "webhook delivery", trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("webhook.event_type", c.eventType),
			attribute.Int("webhook.attempt", c.attempts+1))
	}
	return ctx, span
}

// endAttempt records the outcome of an attempt on its span and ends it.
func endAttempt(span trace.Span, r result) {
	if span.IsRecording() {
		if r.status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", r.status))
		}
		if !r.ok() {
			span.SetStatus(codes.Error, strconv.Itoa(r.status))
		}
	}
	span.End()
}

// setTraceparent gives the request the attempt's traceparent.
func (d *Deliverer) setTraceparent(ctx context.Context, req *http.Request, c claimed) {
	if d.tracing {
		telemetry.Propagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
		return
	}
	if id := traceIDOf(c.trace); id != "" {
		req.Header.Set("traceparent", traceparent(id))
	}
}

// traceparent continues the trace traceID: the same trace id, a new span id
// for this attempt, sampled.
func traceparent(traceID string) string {
	var span [8]byte
	_, _ = rand.Read(span[:]) // crypto/rand.Read never fails
	return "00-" + traceID + "-" + hex.EncodeToString(span[:]) + "-01"
}
