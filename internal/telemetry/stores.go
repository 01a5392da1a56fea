package telemetry

import (
	"net/http"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
)

// PoolTracer traces a pgx pool's statements, acquisitions and batches
// within the traced work that runs them (a statement outside a sampled
// span starts no trace). A span is named for the statement's operation
// (SELECT, INSERT, ...) and records neither the SQL text, its arguments
// nor the connection's details. Nil when tracing is off, so that an
// untraced pool has no tracer to call at all.
func (p *Provider) PoolTracer() pgx.QueryTracer {
	if !p.On() {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(p.tp),
		otelpgx.WithDisableSQLStatementInAttributes(), otelpgx.WithDisableConnectionDetailsInAttributes())
}

// InstrumentRedis traces rdb's commands and pipelines made within traced
// work, named for the command, without its arguments (keys carry ids and
// values carry counters and sessions); the background calls (flushes,
// polls) start no trace. Nothing is done when tracing is off.
func (p *Provider) InstrumentRedis(rdb redis.UniversalClient) error {
	if !p.On() {
		return nil
	}
	return redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(childOnly{p.tp}),
		redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false))
}

// HTTPTransport traces the requests made through base (nil: the default
// transport) within traced work, and sends them the W3C traceparent; the
// spans are otelhttp's (method, host and status; no body). It is base
// itself when tracing is off.
func (p *Provider) HTTPTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if !p.On() {
		return base
	}
	return otelhttp.NewTransport(base, otelhttp.WithTracerProvider(childOnly{p.tp}),
		otelhttp.WithPropagators(Propagator()))
}
