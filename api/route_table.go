package api

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// route is one row of the route table: an HTTP method, all (every method)
// or use (middleware for every path under the prefix, from that row on),
// the path, and the handlers in the order they run.
type route struct {
	method   string
	path     string
	handlers []fiber.Handler
}

const (
	methodAll = "ALL"
	methodUse = "USE"
)

func use(prefix string, h ...fiber.Handler) route { return route{methodUse, prefix, h} }
func all(path string, h ...fiber.Handler) route   { return route{methodAll, path, h} }
func get(path string, h ...fiber.Handler) route   { return route{fiber.MethodGet, path, h} }
func post(path string, h ...fiber.Handler) route  { return route{fiber.MethodPost, path, h} }
func put(path string, h ...fiber.Handler) route   { return route{fiber.MethodPut, path, h} }
func patch(path string, h ...fiber.Handler) route { return route{fiber.MethodPatch, path, h} }
func del(path string, h ...fiber.Handler) route   { return route{fiber.MethodDelete, path, h} }

// mount registers the table on app in its order, once checkRoutes found
// nothing wrong with it: fiber panics on a row it cannot register, and
// would silently let an earlier parameter take a later static path.
func mount(app *fiber.App, table []route) error {
	if err := checkRoutes(app.Config(), table); err != nil {
		return err
	}
	for _, r := range table {
		switch r.method {
		case methodUse:
			args := []any{r.path}
			for _, h := range r.handlers {
				args = append(args, h)
			}
			app.Use(args...)
		case methodAll:
			app.All(r.path, r.handlers...)
		case fiber.MethodGet:
			app.Get(r.path, r.handlers...) // and HEAD, as fiber does for every GET
		default:
			app.Add(r.method, r.path, r.handlers...)
		}
	}
	return nil
}

// checkRoutes refuses a table fiber could not register (an unknown method,
// a path that is not absolute, a row without a handler or with a nil one)
// or that would not route as written: the same method and path twice, or a
// static path listed after a parameter path that matches it first.
func checkRoutes(cfg fiber.Config, table []route) error {
	methods := append(slices.Clone(cfg.RequestMethods), methodAll, methodUse)
	var errs []error
	for i, r := range table {
		where := fmt.Sprintf("route %d (%s %s)", i, r.method, r.path)
		switch {
		case !slices.Contains(methods, r.method):
			errs = append(errs, fmt.Errorf("%s: unknown method", where))
		case !strings.HasPrefix(r.path, "/"):
			errs = append(errs, fmt.Errorf("%s: the path must start with /", where))
		case len(r.handlers) == 0 || slices.ContainsFunc(r.handlers, func(h fiber.Handler) bool { return h == nil }):
			errs = append(errs, fmt.Errorf("%s: a route needs handlers, none nil", where))
		}
		if r.method == methodUse {
			continue
		}
		for j, earlier := range table[:i] {
			if earlier.method == methodUse || !sameMethod(earlier.method, r.method) {
				continue
			}
			switch {
			case earlier.path == r.path:
				errs = append(errs, fmt.Errorf("%s: listed twice (first as route %d)", where, j))
			case isStatic(r.path) && !isStatic(earlier.path) && fiber.RoutePatternMatch(r.path, earlier.path, cfg):
				errs = append(errs, fmt.Errorf("%s: route %d (%s) takes it first; list the static path before it", where, j, earlier.path))
			}
		}
	}
	return errors.Join(errs...)
}

// sameMethod reports whether two rows' methods share a method (all shares
// every one).
func sameMethod(a, b string) bool { return a == b || a == methodAll || b == methodAll }

// isStatic reports whether path has no parameter or wildcard.
func isStatic(path string) bool { return !strings.ContainsAny(path, ":*+") }
