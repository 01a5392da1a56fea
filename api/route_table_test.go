package api

import (
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"broll/wiring"
)

// A route table that breaks a rule is refused whole, with every row at
// fault named, and nothing of it is registered: a bad route cannot be
// built, and routes never panics.
func TestMountRefusesABadRouteTable(t *testing.T) {
	t.Parallel()
	ok := func(*fiber.Ctx) error { return nil }
	for name, c := range map[string]struct {
		table []route
		want  []string
	}{
		"unknown method":         {[]route{{method: "FETCH", path: "/x", handlers: []fiber.Handler{ok}}}, []string{"unknown method"}},
		"relative path":          {[]route{get("x", ok)}, []string{"must start with /"}},
		"no handler":             {[]route{get("/x")}, []string{"needs handlers"}},
		"nil handler":            {[]route{get("/x", ok, nil)}, []string{"needs handlers"}},
		"listed twice":           {[]route{get("/x", ok), get("/x", ok)}, []string{"listed twice"}},
		"all, then one method":   {[]route{all("/x", ok), post("/x", ok)}, []string{"listed twice"}},
		"static after parameter": {[]route{get("/docs/:guide", ok), get("/docs/errors", ok)}, []string{"takes it first"}},
		"every fault named": {[]route{get("x", ok), get("/y"), get("/:p", ok), get("/z", ok)},
			[]string{"route 0 (GET x)", "route 1 (GET /y)", "route 3 (GET /z)"}},
	} {
		t.Run(name, func(t *testing.T) {
			app := fiber.New()
			err := mount(app, c.table)
			for _, want := range c.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("mount = %v, want an error saying %q", err, want)
				}
			}
			if n := len(app.GetRoutes()); n != 0 {
				t.Fatalf("%d routes registered from a refused table", n)
			}
		})
	}
	t.Run("what the rules allow", func(t *testing.T) {
		app := fiber.New()
		table := []route{use("/docs", ok), get("/docs/errors", ok), get("/docs/:guide", ok), post("/docs/:guide", ok),
			get("/x/:id", ok), post("/x/new", ok), all("/mcp", ok)}
		if err := mount(app, table); err != nil {
			t.Fatal(err)
		}
	})
}

// The node's own table checks (every setup mounts it), and a second app
// over one graph is refused, not a panic: its metrics are on the graph's
// registry already.
func TestNodeRouteTableAndOneAppPerGraph(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	if n := len(e.nodes[0].app.GetRoutes(true)); n < 60 {
		t.Fatalf("the node mounted %d routes", n)
	}
	if _, err := NewNode(e.nodes[0].g); err == nil || !strings.Contains(err.Error(), "metrics") {
		t.Fatalf("a second node over one graph: %v", err)
	}
	if _, err := NewNode(e.graph(t, e.cfg, wiring.Options{Parts: wiring.CLIParts})); err == nil {
		t.Fatal("a node over a graph without the API's parts")
	}
}
