package api

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"broll/internal/apperr"
)

// refuseUnknownMethods answers requests whose method fiber does not know
// (PROPFIND, a lower-case "get", junk) with problem+json like every other
// error. Fiber answers them itself with a plain-text 400 before any
// middleware or error handler runs, so the check wraps its server handler.
func refuseUnknownMethods(app *fiber.App, baseURL string) {
	srv := app.Server()
	next := srv.Handler
	srv.Handler = func(rctx *fasthttp.RequestCtx) {
		if slices.Contains(fiber.DefaultMethods, string(rctx.Method())) {
			next(rctx)
			return
		}
		c := app.AcquireCtx(rctx)
		defer app.ReleaseCtx(c)
		method := string(rctx.Method())
		if len(method) > 32 {
			method = method[:32]
		}
		_ = writeProblem(c, baseURL, apperr.New(apperr.Invalid, "unsupported HTTP method %s", strconv.Quote(apperr.Clip(method))))
	}
}

// allowTable is every route pattern the app serves with the methods it
// takes, read from the router once all routes are mounted, so that the
// 405's Allow header can never disagree with what is registered.
type allowTable struct {
	cfg    fiber.Config
	routes []allowRoute
}

type allowRoute struct {
	pattern string
	methods []string
}

func newAllowTable(app *fiber.App) *allowTable {
	t := &allowTable{cfg: app.Config()}
	index := map[string]int{}
	for _, r := range app.GetRoutes(true) { // true: without middleware, which every method passes through
		i, ok := index[r.Path]
		if !ok {
			i = len(t.routes)
			index[r.Path] = i
			t.routes = append(t.routes, allowRoute{pattern: r.Path})
		}
		if !slices.Contains(t.routes[i].methods, r.Method) {
			t.routes[i].methods = append(t.routes[i].methods, r.Method)
		}
	}
	return t
}

// allowed lists the methods of every route whose pattern matches path, in
// the router's order; nil when no route has that path.
func (t *allowTable) allowed(path string) []string {
	if !t.cfg.StrictRouting && len(path) > 1 {
		path = strings.TrimRight(path, "/") // as the router matches
	}
	var out []string
	for _, r := range t.routes {
		if fiber.RoutePatternMatch(path, r.pattern, t.cfg) {
			for _, m := range r.methods {
				if !slices.Contains(out, m) {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// unrouted answers a request no route took: 405 with Allow when the path
// is known under other methods, else 404.
func (t *allowTable) unrouted(c *fiber.Ctx) error {
	allow := t.allowed(c.Path())
	if len(allow) == 0 || slices.Contains(allow, c.Method()) {
		return apperr.NotFoundf("no such route: %s %s", c.Method(), apperr.Clip(c.Path()))
	}
	list := strings.Join(allow, ", ")
	c.Set(fiber.HeaderAllow, list)
	return apperr.New(apperr.MethodNotAllowed, "%s is not allowed here; this path takes %s", c.Method(), list).
		With("allowed_methods", allow)
}
