package api

import (
	"github.com/gofiber/fiber/v2"

	"broll/wiring"
)

// Node is one API node: the fiber app over its services, whose
// services the binary, tests and benchmarks reach beside the app (Usage,
// to flush it; Metrics, which the node's metrics listener serves, kept off
// the public port and so not on App).
type Node struct {
	*wiring.Services
	App *fiber.App
	// Warmup holds /readyz at 503 until the catalog is warm; its owner
	// starts it (Warmup.Start), as cmd/broll-api does.
	Warmup *Warmup
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
	return &Node{Services: g, App: app, Warmup: warmup}, nil
}
