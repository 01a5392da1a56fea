package api

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/telemetry"
	"broll/wiring"
)

// With tracing on, a request's server span is named for its route
// template, continues an incoming traceparent, and its trace id is the
// one the access log line carries; a request without traceparent starts a
// trace of its own, logged too.
func TestRequestSpanAndAccessLog(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp, err := wiring.NewTelemetry(context.Background(), telemetry.ProviderOptions{Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	e := setup(t, envOpts{telemetry: tp, configure: func(c *config.Config) { c.LogLevel = "info" }})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 1000})
	vid := billingtest.Videos(t, e.pool, 1, "easy")[0]
	key := acct.CustomerKey(t, e.pool, "buyer").Secret

	server := func(route string) tracetest.SpanStub {
		t.Helper()
		for _, s := range exp.GetSpans() {
			if s.SpanKind == trace.SpanKindServer && s.Name == route {
				return s
			}
		}
		t.Fatalf("no server span %q among %d spans", route, len(exp.GetSpans()))
		return tracetest.SpanStub{}
	}

	const incoming, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	h := bearerHeader(key)
	h["traceparent"] = "00-" + incoming + "-" + parent + "-01"
	r := e.send(t, 0, "GET", "/api/v1/broll/"+vid.String(), h, nil)
	span := server("GET /api/v1/broll/:id")
	if span.SpanContext.TraceID().String() != incoming || span.Parent.SpanID().String() != parent || !span.Parent.IsRemote() {
		t.Errorf("span %s (parent %s): want a child of the traceparent", span.SpanContext.TraceID(), span.Parent.SpanID())
	}
	lines := e.accessLines(t, r.header.Get("X-Request-Id"))
	if len(lines) != 1 || lines[0]["trace_id"] != incoming {
		t.Errorf("access log %v, want trace_id %s", lines, incoming)
	}

	exp.Reset()
	r = e.do(t, 0, "GET", "/api/v1/balance", key, nil)
	span = server("GET /api/v1/balance")
	lines = e.accessLines(t, r.header.Get("X-Request-Id"))
	if span.Parent.IsValid() || len(lines) != 1 || lines[0]["trace_id"] != span.SpanContext.TraceID().String() {
		t.Errorf("access log %v, span %s with parent %v: want the new trace's id logged", lines, span.SpanContext.TraceID(), span.Parent.SpanID())
	}
	for _, kv := range span.Attributes {
		if kv.Key == "http.response.status_code" && kv.Value.AsInt64() != 200 {
			t.Errorf("status attribute %v", kv.Value.String())
		}
	}
}
