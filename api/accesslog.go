package api

import (
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/config"
)

// accessLog writes the operator's first look at traffic: one info line per
// request with its request id, method, route pattern (never the raw path,
// which carries ids and download signatures), status, duration, key id and
// the trace id of an incoming traceparent. Busy nodes keep a share of the
// lines (BROLL_ACCESS_LOG_SAMPLE); 5xx answers and requests slower than
// BROLL_ACCESS_LOG_SLOW are always written, since those are the lines an
// incident is read from.
type accessLog struct {
	logger *slog.Logger
	sample float64
	slow   time.Duration
}

func newAccessLog(logger *slog.Logger, cfg config.Config) accessLog {
	return accessLog{logger: logger, sample: cfg.AccessLogSample, slow: cfg.AccessLogSlow}
}

// write logs one finished request, or leaves it out of the sample.
func (a accessLog) write(c *fiber.Ctx, method, route string, status int, took time.Duration) {
	slow := took >= a.slow
	// Float64 is in [0, 1): a sample of 1 keeps every line, 0 none.
	if status < 500 && !slow && rand.Float64() >= a.sample {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("request_id", requestID(c)), slog.String("method", method),
		slog.String("route", route), slog.Int("status", status),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000))
	if p := principal(c); p.KeyID != uuid.Nil {
		attrs = append(attrs, slog.String("key_id", p.KeyID.String()))
	}
	if id := traceID(c); id != "" {
		attrs = append(attrs, slog.String("trace_id", id))
	}
	if slow {
		attrs = append(attrs, slog.Bool("slow", true))
	}
	a.logger.LogAttrs(c.UserContext(), slog.LevelInfo, "request", attrs...)
}
