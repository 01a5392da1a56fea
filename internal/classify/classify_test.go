package classify_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/internal/testkit"
)

// TestOutagesAreUnavailable: real failures of real components, as the
// handlers meet them, are 503 unavailable; everything else keeps its code.
func TestOutagesAreUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := testkit.NewPool(t)
	rdb := testkit.Redis(t).Client

	// Port 1: nothing answers there.
	refused, err := pgxpool.New(ctx, "postgres://broll@127.0.0.1:1/broll?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(refused.Close)
	_, refusedErr := refused.Exec(ctx, "SELECT 1")

	closed, _ := testkit.NewPool(t)
	closed.Close()
	_, closedErr := closed.Exec(ctx, "SELECT 1")

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, deadlineErr := pool.Exec(short, "SELECT pg_sleep(10)")

	deadRedis := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = deadRedis.Close() })
	redisDownErr := deadRedis.Get(ctx, "k").Err()
	closedRedis := redis.NewClient(rdb.Options())
	_ = closedRedis.Close()
	redisClosedErr := closedRedis.Get(ctx, "k").Err()

	for name, err := range map[string]error{
		"postgres refused": refusedErr, "pool closed": closedErr, "deadline on a query": deadlineErr,
		"redis refused": redisDownErr, "redis client closed": redisClosedErr,
		"wrapped": fmt.Errorf("balance: %w", closedErr),
	} {
		t.Run(name, func(t *testing.T) {
			if err == nil {
				t.Fatal("no error to classify")
			}
			out := classify.Error(err)
			if out.Status != http.StatusServiceUnavailable || out.Err.Code != apperr.Unavailable || !out.Known {
				t.Fatalf("%v: %d %s known=%v", err, out.Status, out.Err.Code, out.Known)
			}
		})
	}

	t.Run("application errors keep their code and message", func(t *testing.T) {
		out := classify.Error(fmt.Errorf("op: %w", apperr.NotFoundf("video not found")))
		if out.Status != http.StatusNotFound || out.Err.Message != "video not found" || !out.Known {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("fiber errors", func(t *testing.T) {
		out := classify.Error(fiber.ErrRequestEntityTooLarge)
		if out.Status != http.StatusRequestEntityTooLarge || out.Err.Code != apperr.PayloadTooLarge {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("unknown errors are internal and say nothing", func(t *testing.T) {
		out := classify.Error(errors.New(`pq: relation "secret_table" does not exist`))
		if out.Status != http.StatusInternalServerError || out.Known ||
			out.Err.Message != "internal error; quote the request id when reporting it" {
			t.Fatalf("%+v", out)
		}
	})
}
