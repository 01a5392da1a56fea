package billing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// startBatch starts the span of one purchase batch. Its statements are its
// children; it belongs to the trace of the purchase that opened it (the
// first job's request), and links to the span of every purchase it carries,
// so that each purchase's trace leads to the batch that charged it. Links
// are made for sampled requests only, and nothing is built with tracing
// off.
func (b *batcher) startBatch(jobs []*purchaseJob) (context.Context, trace.Span) {
	ctx := context.Background()
	if !b.tracing || len(jobs) == 0 {
		return ctx, trace.SpanFromContext(ctx)
	}
	var links []trace.Link
	for _, j := range jobs {
		if j.span.IsSampled() {
			links = append(links, trace.Link{SpanContext: j.span})
		}
	}
	if first := jobs[0].span; first.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, first)
	}
	ctx, span := b.tracer.Start(ctx, "purchase batch", trace.WithLinks(links...))
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("broll.purchases", len(jobs)), attribute.Bool("broll.quote", jobs[0].dry))
	}
	return ctx, span
}
