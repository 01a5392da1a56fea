package api

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"broll/tenancy"
	"broll/wiring"
)

// Node is one API node: the fiber app, and what its owner (the binary,
// tests, benchmarks) runs beside it. Whatever else the owner needs it takes
// from the services it opened and built the node over.
type Node struct {
	App *fiber.App
	// Warmup holds /readyz at 503 until the catalog is warm; its owner
	// starts it (Warmup.Start), as cmd/broll-api does.
	Warmup *Warmup
	// Logger is the node's log.
	Logger *slog.Logger
	// Usage counts the requests the node admits; its owner runs Usage.Run
	// to flush the counts.
	Usage *tenancy.Usage
	// Metrics is what the node's metrics listener serves, kept off the
	// public port and so not on App.
	Metrics *prometheus.Registry
}

// NewNode builds the node's app over g, opened with wiring.APIParts (see
// package wiring, the composition root); the caller closes g. An error is a
// broken build (a route table or an embedded template that does not
// check), never a runtime condition.
func NewNode(g *wiring.Services) (*Node, error) {
	if err := g.Require("api", wiring.APIParts); err != nil {
		return nil, err
	}
	app, warmup, err := newApp(g)
	if err != nil {
		return nil, err
	}
	return &Node{App: app, Warmup: warmup, Logger: g.Logger, Usage: g.Usage, Metrics: g.Metrics}, nil
}
