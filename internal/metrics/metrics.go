// Package metrics builds the Prometheus registry each process serves at
// /metrics: Go runtime and process metrics, the build, the Postgres pool,
// the Redis client's pool, the dependencies' answers, the asynq queues and the webhook deliveries. The adapters (api, worker) register their own metrics on it.
// Every process has its own registry; nothing is registered globally.
package metrics

import (
	"net/http"

	"github.com/IBM/pgxpoolprometheus"
	"github.com/hibiken/asynq"
	asynqmetrics "github.com/hibiken/asynq/x/metrics"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes the service's own metrics.
const Namespace = "broll"

// NewRegistry returns a registry holding the Go runtime and process
// collectors and broll_build_info.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(),
	)
	return reg
}

// RegisterPool exports the pool's statistics (connections acquired, idle,
// total and max, acquire counts and waits) as pgxpool_* metrics.
func RegisterPool(reg prometheus.Registerer, pool *pgxpool.Pool) {
	reg.MustRegister(pgxpoolprometheus.NewCollector(pool, map[string]string{"db": "broll"}))
}

// RegisterQueues exports the asynq queues' depth by state (pending, active,
// scheduled, retry, archived, completed), size, latency and processed and
// failed totals as asynq_* metrics, read from Redis at each scrape.
func RegisterQueues(reg prometheus.Registerer, inspector *asynq.Inspector) {
	reg.MustRegister(asynqmetrics.NewQueueMetricsCollector(inspector))
}

// Handler serves the registry in the Prometheus text format. A collector
// that fails (Redis down during a scrape) drops its own metrics only.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg,
	})
}

// Counter, CounterVec, Histogram and HistogramVec build the service's own
// metrics under Namespace, for the adapters to register.
func Counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
}

func CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

func Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
}

func HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
}
