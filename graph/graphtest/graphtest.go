// Package graphtest opens service graphs for tests, over the test's own
// database and Redis, as the composition root opens them for processes:
// test factories and set-ups build no service of their own.
package graphtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/graph"
	"broll/internal/config"
)

// Open opens the graph cfg and o describe and closes it when the test ends.
func Open(t testing.TB, cfg config.Config, o graph.Options) *graph.Graph {
	t.Helper()
	g, err := graph.Open(context.Background(), cfg, o)
	if err != nil {
		t.Fatalf("open the service graph: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

// Over is the graph of the services that need only pool (tenancy, billing
// without download links, the catalog without media or queue) under the
// default configuration: what test factories make accounts, keys and
// clips with.
func Over(t testing.TB, pool *pgxpool.Pool) *graph.Graph {
	t.Helper()
	return Open(t, config.Defaults(), graph.Options{Pool: pool})
}
