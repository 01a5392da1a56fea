package api

import (
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"broll/internal/apperr"
)

// refuseUnknownMethods answers requests whose method fiber does not know
// (PROPFIND, a lower-case "get", junk) with problem+json like every other
// error. Fiber answers them itself with a plain-text 400 before any
// middleware or error handler runs, so the check wraps its server handler.
func refuseUnknownMethods(app *fiber.App) {
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
		_ = writeProblem(c, apperr.New(apperr.Invalid, "unsupported HTTP method %s", strconv.Quote(method)))
	}
}
