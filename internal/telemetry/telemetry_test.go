package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Without an OTLP endpoint tracing is off: the provider is the no-op one,
// its spans record nothing, no goroutine is started and nothing is traced
// in the pool or the Redis client.
func TestOffWithoutEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	before := runtime.NumGoroutine()
	p, err := NewProvider(context.Background(), ProviderOptions{ServiceName: "broll-api"})
	if err != nil {
		t.Fatal(err)
	}
	if p.On() || p.PoolTracer() != nil {
		t.Fatal("tracing on without an endpoint")
	}
	_, span := p.Tracer("t").Start(context.Background(), "x")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Error("a span of the off provider records")
	}
	span.End()
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines after, %d before", after, before)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
	// A nil provider is an off one.
	var none *Provider
	if none.On() || none.HTTPTransport(nil) != http.DefaultTransport {
		t.Error("nil provider is not off")
	}
}

// OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none turn it off with an
// endpoint set.
func TestDisabledByVariables(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	if !Enabled() {
		t.Fatal("an endpoint does not turn tracing on")
	}
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if Enabled() {
		t.Error("OTEL_SDK_DISABLED=true leaves tracing on")
	}
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if Enabled() {
		t.Error("OTEL_TRACES_EXPORTER=none leaves tracing on")
	}
}

// With an endpoint the spans go there over OTLP/HTTP, named by
// OTEL_SERVICE_NAME, and Shutdown flushes what is buffered.
func TestExportsToTheEndpoint(t *testing.T) {
	var posts atomic.Int32
	var path atomic.Value
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		posts.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "from-the-variable")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "60000") // only Shutdown exports
	p, err := NewProvider(context.Background(), ProviderOptions{ServiceName: "broll-api"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.On() {
		t.Fatal("tracing off with an endpoint")
	}
	_, span := p.Tracer("t").Start(context.Background(), "x")
	if !span.IsRecording() {
		t.Error("the span does not record")
	}
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if posts.Load() != 1 || path.Load() != "/v1/traces" {
		t.Errorf("%d exports to %v, want one to /v1/traces", posts.Load(), path.Load())
	}
}

// The sampler is OTEL_TRACES_SAMPLER's, parent-based: a ratio of 0 samples
// no new trace, but a sampled caller's trace is kept.
func TestSamplerFromVariables(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0")
	exp := tracetest.NewInMemoryExporter()
	p, err := NewProvider(context.Background(), ProviderOptions{Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	_, root := p.Tracer("t").Start(context.Background(), "root")
	if root.SpanContext().IsSampled() || !root.SpanContext().IsValid() {
		t.Errorf("a new trace at ratio 0: sampled %v, valid %v", root.SpanContext().IsSampled(), root.SpanContext().IsValid())
	}
	root.End()
	parent := FromTraceparent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	_, child := p.Tracer("t").Start(parent, "child")
	child.End()
	if !child.SpanContext().IsSampled() || len(exp.GetSpans()) != 1 {
		t.Errorf("the sampled caller's trace: sampled %v, %d spans exported", child.SpanContext().IsSampled(), len(exp.GetSpans()))
	}
}

// A traceparent written from a span's context reads back as that span's
// context; an empty or malformed one leaves the context without a span.
func TestTraceparentRoundTrip(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p, err := NewProvider(context.Background(), ProviderOptions{Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := p.Tracer("t").Start(context.Background(), "x")
	defer span.End()
	tp := Traceparent(ctx)
	if !strings.HasPrefix(tp, "00-"+span.SpanContext().TraceID().String()+"-"+span.SpanContext().SpanID().String()) {
		t.Fatalf("traceparent %q of span %v", tp, span.SpanContext())
	}
	back := trace.SpanContextFromContext(FromTraceparent(context.Background(), tp))
	if back.TraceID() != span.SpanContext().TraceID() || back.SpanID() != span.SpanContext().SpanID() || !back.IsRemote() {
		t.Errorf("read back %v", back)
	}
	for _, bad := range []string{"", "garbage", "00-" + strings.Repeat("0", 32) + "-00f067aa0ba902b7-01"} {
		if Traceparent(FromTraceparent(context.Background(), bad)) != "" {
			t.Errorf("%q gave a span context", bad)
		}
	}
}

// Redis commands, HTTP calls and statements outside a recording span start
// no trace of their own.
func TestChildOnlyStartsNoTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p, err := NewProvider(context.Background(), ProviderOptions{Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	tr := childOnly{p.TracerProvider()}.Tracer("t")
	_, s := tr.Start(context.Background(), "background")
	s.End()
	ctx, parent := p.Tracer("t").Start(context.Background(), "work")
	_, c := tr.Start(ctx, "call")
	c.End()
	parent.End()
	if n := len(exp.GetSpans()); n != 2 {
		t.Errorf("%d spans, want the work and its call", n)
	}
}
