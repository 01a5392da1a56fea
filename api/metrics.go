package api

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"broll/billing"
	"broll/internal/admission"
	"broll/internal/classify"
	"broll/internal/metrics"
)

// apiMetrics are the HTTP node's own metrics; the registry also carries the
// runtime, process and Postgres pool collectors.
type apiMetrics struct {
	access          accessLog
	requests        *prometheus.CounterVec
	latency         *prometheus.HistogramVec
	rateLimited     prometheus.Counter
	purchaseCalls   *prometheus.CounterVec
	videosPurchased prometheus.Counter
	chargedCents    prometheus.Counter
	toolCalls       *prometheus.CounterVec
	toolLatency     *prometheus.HistogramVec
}

// newAPIMetrics registers the node's metrics on reg; it fails on a
// registry that has them already (a second app over one graph).
func newAPIMetrics(reg prometheus.Registerer, gate *admission.Gate, access accessLog) (*apiMetrics, error) {
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &apiMetrics{
		access: access,
		requests: metrics.CounterVec("http_requests_total",
			"HTTP requests by method, route pattern and status.", "method", "route", "status"),
		latency: metrics.HistogramVec("http_request_duration_seconds",
			"Time from the request's arrival to its handler's return, by method and route pattern.",
			buckets, "method", "route"),
		toolCalls: metrics.CounterVec("mcp_tool_calls_total",
			"MCP tool calls by tool and outcome: ok, refused (an error result the caller can act on: bad arguments, scope, balance...) or failed (internal or unavailable).",
			"tool", "outcome"),
		toolLatency: metrics.HistogramVec("mcp_tool_duration_seconds",
			"Time a tool call took in its handler, by tool and outcome.", buckets, "tool", "outcome"),
		rateLimited: metrics.Counter("rate_limited_total",
			"Requests refused with 429 by the per-key rate limit."),
		purchaseCalls: metrics.CounterVec("purchase_requests_total",
			"Purchase calls (REST, MCP and legacy) by outcome: charged, already_owned, dry_run, refused (with its error code) or failed.",
			"api", "result", "code"),
		videosPurchased: metrics.Counter("videos_purchased_total",
			"New purchases (videos charged for); re-purchases of owned videos are not counted."),
		chargedCents: metrics.Counter("purchase_charged_cents_total",
			"Amount charged to the account balance by purchases, in US cents."),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.rateLimited, m.purchaseCalls, m.videosPurchased,
		m.chargedCents, m.toolCalls, m.toolLatency,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: metrics.Namespace, Name: "rate_limiter_fallbacks_total",
			Help: "Rate-limit decisions made by the in-process limiter because Redis was unreachable.",
		}, func() float64 { return float64(gate.Fallbacks()) }),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("api: metrics: %w", err)
		}
	}
	return m, nil
}

// observe times every request, writes its access log line and counts it
// by route pattern (never the raw path, which would make a series per id)
// and final status. Errors are rendered here, through the app's one error
// handler, so that the status counted and logged is the status sent.
func (m *apiMetrics) observe(c *fiber.Ctx) error {
	start := time.Now()
	if err := c.Next(); err != nil {
		if herr := c.App().ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	// Both labels are strings that outlive the request: fiber's own method
	// string points into a buffer the next request reuses.
	took := time.Since(start)
	method, route := methodLabel(c.Method()), routeLabel(c)
	m.latency.WithLabelValues(method, route).Observe(took.Seconds())
	status := c.Response().StatusCode()
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.access.write(c, method, route, status, took)
	return nil
}

// routeLabel is the pattern of the route that answered (the app's own
// string, registered once). A request refused
// by a group's middleware (401, 429) is labelled with the group's prefix;
// one that matched no route at all shares the label "unmatched".
func routeLabel(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || r.Path == "/" || r.Path == "" {
		return "unmatched"
	}
	return r.Path
}

// methodLabel keeps the label set small whatever methods clients invent.
// It returns fiber's constants, never the request's own string.
func methodLabel(m string) string {
	for _, known := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodDelete, fiber.MethodHead,
		fiber.MethodPut, fiber.MethodPatch, fiber.MethodOptions} {
		if m == known {
			return known
		}
	}
	return "other"
}

// observePurchase counts one purchase call and what it charged.
func (m *apiMetrics) observePurchase(api string, res billing.PurchaseResult, err error) {
	if err != nil {
		if out := classify.Error(err); out.Status < 500 {
			m.purchaseCalls.WithLabelValues(api, "refused", string(out.Err.Code)).Inc()
		} else {
			m.purchaseCalls.WithLabelValues(api, "failed", "").Inc()
		}
		return
	}
	if res.DryRun {
		m.purchaseCalls.WithLabelValues(api, "dry_run", "").Inc()
		return
	}
	fresh := 0
	for _, p := range res.Purchases {
		if !p.AlreadyOwned {
			fresh++
		}
	}
	result := "already_owned"
	if fresh > 0 {
		result = "charged"
	}
	m.purchaseCalls.WithLabelValues(api, result, "").Inc()
	m.videosPurchased.Add(float64(fresh))
	m.chargedCents.Add(float64(res.TotalCharged))
}

// observeTool counts one MCP tool call and its time. The tool is one the
// server registered (the SDK answers unknown names itself), so the label
// set stays small.
func (m *apiMetrics) observeTool(tool string, err error, took time.Duration) {
	outcome := "ok"
	if err != nil {
		outcome = "refused"
		if classify.Error(err).Status >= 500 {
			outcome = "failed"
		}
	}
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	m.toolLatency.WithLabelValues(tool, outcome).Observe(took.Seconds())
}
