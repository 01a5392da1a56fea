package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/telemetry"
)

// tracing gives each request its server span, a child of the caller's W3C
// traceparent when one came, in the request's context: the spans of the
// statements, Redis calls and jobs the request makes are its children,
// and the events and jobs it writes carry its context (telemetry's
// Traceparent) to the worker and the webhook deliveries. The span is named
// for the route template that answered ("GET /api/v1/broll/:id"), never the
// raw path, and records the method, route and status only; attributes are
// built only for a span that is sampled. With tracing off no span starts,
// but an incoming traceparent still reaches the context, for the access
// log and the deliveries, as it always has.
type tracing struct {
	tracer trace.Tracer
	on     bool
}

func newTracing(tp *telemetry.Provider) tracing {
	return tracing{tracer: tp.Tracer("broll/api"), on: tp.On()}
}

func (t tracing) handle(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if h := &c.Request().Header; len(h.Peek("traceparent")) > 0 {
		ctx = telemetry.Propagator().Extract(ctx, headerCarrier{h})
	}
	if !t.on {
		c.SetUserContext(ctx)
		return c.Next()
	}
	ctx, span := t.tracer.Start(ctx, "HTTP request", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	c.SetUserContext(ctx)
	err := c.Next()
	if span.IsRecording() {
		method, route := methodLabel(c.Method()), routeLabel(c)
		status := c.Response().StatusCode()
		span.SetName(method + " " + route)
		span.SetAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route),
			semconv.HTTPResponseStatusCode(status))
		if status >= fiber.StatusInternalServerError {
			span.SetStatus(codes.Error, "")
		}
	}
	return err
}

// headerCarrier reads a request's headers for the propagator.
type headerCarrier struct{ h *fasthttp.RequestHeader }

func (c headerCarrier) Get(key string) string { return string(c.h.Peek(key)) }

func (c headerCarrier) Set(key, value string) { c.h.Set(key, value) }

func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, c.h.Len())
	for k := range c.h.All() {
		keys = append(keys, string(k))
	}
	return keys
}
