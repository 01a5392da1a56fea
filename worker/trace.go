package worker

import (
	"context"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/tasks"
	"broll/internal/telemetry"
)

// traceTasks gives each task its span, the child of the span that queued it
// (the traceparent its payload carries, tasks.Trace): a clip's import, the
// relay of its jobs, its probe and embedding, and the webhook that reports
// it are one trace, as are a purchase and its licence stamp. The span is
// named for the task type and records the type, queue and retry count;
// a failure marks it without the error's text, which may name a file.
func (w *Worker) traceTasks(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		ctx = telemetry.FromTraceparent(ctx, tasks.Traceparent(t.Payload()))
		ctx, span := w.tracer.Start(ctx, "task "+t.Type(), trace.WithSpanKind(trace.SpanKindConsumer))
		defer span.End()
		if span.IsRecording() {
			queue, _ := asynq.GetQueueName(ctx)
			retried, _ := asynq.GetRetryCount(ctx)
			span.SetAttributes(attribute.String("messaging.system", "asynq"),
				attribute.String("messaging.destination.name", queue),
				attribute.String("asynq.task.type", t.Type()), attribute.Int("asynq.task.retried", retried))
		}
		err := next.ProcessTask(ctx, t)
		if err != nil {
			span.SetStatus(codes.Error, "task failed")
		}
		return err
	})
}

// step starts the span of one step of a task (probe, embed, stamp); n is
// the number of clips or purchases it handles.
func (w *Worker) step(ctx context.Context, name string, n int) (context.Context, trace.Span) {
	ctx, span := w.tracer.Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("broll.items", n))
	}
	return ctx, span
}

// endStep ends a step's span, marking a failure without its text.
func endStep(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, "step failed")
	}
	span.End()
}
