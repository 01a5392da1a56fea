// Package telemetry owns the process's OpenTelemetry traces: it builds the
// TracerProvider from the standard OTEL_* variables, exporting over OTLP,
// and flushes it at shutdown. With no OTLP endpoint configured tracing is
// off at no cost: the provider is the API's no-op one, which starts no
// goroutine, exports nothing and records no attribute.
//
// The provider is passed to whoever starts spans (the composition root
// hands it on); nothing here sets the OpenTelemetry globals.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Provider is the process's tracer provider: the SDK's when an OTLP
// endpoint is configured, the no-op one otherwise. A nil *Provider is a
// no-op one too, so that tests and tools that trace nothing pass nil.
type Provider struct {
	tp  trace.TracerProvider
	sdk *sdktrace.TracerProvider
}

// ProviderOptions are what the OTEL_* variables do not say.
type ProviderOptions struct {
	// ServiceName names the process when OTEL_SERVICE_NAME (or a
	// service.name in OTEL_RESOURCE_ATTRIBUTES) does not.
	ServiceName string
	// Exporter, when set, receives every span in place of the OTLP
	// exporter, synchronously and whatever the variables say (tests
	// export to memory). The sampler is still OTEL_TRACES_SAMPLER's.
	Exporter sdktrace.SpanExporter
}

// Enabled reports whether the OTEL_* variables turn tracing on: an OTLP
// endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)
// is set, OTEL_SDK_DISABLED is not true and OTEL_TRACES_EXPORTER is not
// "none".
func Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") ||
		strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// NewProvider builds the provider the OTEL_* variables describe:
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) and the exporter's
// other OTEL_EXPORTER_OTLP_* settings, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
// (parent-based sampling of every trace when unset). Off, it is the no-op
// provider. Nothing is dialled here: the exporter connects when it first
// exports.
func NewProvider(ctx context.Context, o ProviderOptions) (*Provider, error) {
	if o.Exporter == nil && !Enabled() {
		return &Provider{tp: noop.NewTracerProvider()}, nil
	}
	name := o.ServiceName
	if name == "" {
		name = "broll"
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(name)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	var export sdktrace.TracerProviderOption
	if o.Exporter != nil {
		export = sdktrace.WithSyncer(o.Exporter)
	} else {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
		}
		export = sdktrace.WithBatcher(exp)
	}
	// The sampler is the SDK's reading of OTEL_TRACES_SAMPLER (and _ARG),
	// parent-based always-on by default.
	sdk := sdktrace.NewTracerProvider(sdktrace.WithResource(res), export)
	return &Provider{tp: sdk, sdk: sdk}, nil
}

// TracerProvider is the provider to hand to instrumentation.
func (p *Provider) TracerProvider() trace.TracerProvider {
	if p == nil {
		return noop.NewTracerProvider()
	}
	return p.tp
}

// Tracer is the tracer of an instrumentation scope (a package path).
func (p *Provider) Tracer(scope string) trace.Tracer { return p.TracerProvider().Tracer(scope) }

// On reports whether spans are recorded and exported.
func (p *Provider) On() bool { return p != nil && p.sdk != nil }

// Shutdown exports the spans still buffered and stops the exporter; ctx
// bounds the wait. A no-op provider has nothing to do.
func (p *Provider) Shutdown(ctx context.Context) error {
	if !p.On() {
		return nil
	}
	if err := p.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}

// Propagator is the W3C Trace Context propagator, the one format the
// service reads and writes (traceparent, tracestate).
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }
