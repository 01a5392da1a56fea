// Command edge measures the cost of the API edge: requests per second of an
// authenticated, rate-limited v1 endpoint (key lookup, revocation markers,
// GCRA limiter and usage counters in Redis, the handler's Postgres query)
// next to a bare fiber handler returning the same body, in one run, on the
// same machine, with the same load generator.
//
//	make bench-edge   (or: go run ./deploy/bench/edge -duration 5s -conns 64)
//
// It needs the local stack (DATABASE_URL, REDIS_URL) and works in a database
// of its own, created and dropped here.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/deploy/bench/benchkit"
)

func main() {
	duration := flag.Duration("duration", 5*time.Second, "how long each target is loaded")
	conns := flag.Int("conns", 64, "concurrent client connections")
	flag.Parse()
	if err := run(*duration, *conns); err != nil {
		fmt.Fprintln(os.Stderr, "edge:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, conns int) error {
	ctx := context.Background()
	sc, err := benchkit.OpenScratch(ctx, conns*2, false)
	if err != nil {
		return err
	}
	defer sc.Close()
	pool := sc.Pool
	root, err := sc.Account(ctx)
	if err != nil {
		return err
	}
	node, err := sc.Node(ctx)
	if err != nil {
		return err
	}
	app, usage := node.App, node.Usage
	body := []byte(`{"currency":"USD","tiers":[{"name":"easy","price":5.00,"currency":"USD"},{"name":"medium","price":10.00,"currency":"USD"},{"name":"hard","price":25.00,"currency":"USD"}]}`)
	bare := fiber.New(fiber.Config{DisableStartupMessage: true})
	bare.Get("/api/v1/pricing", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	})

	bareAddr, stopBare, err := benchkit.Serve(bare)
	if err != nil {
		return err
	}
	defer stopBare()
	authAddr, stopAuth, err := benchkit.Serve(app)
	if err != nil {
		return err
	}
	defer stopAuth()

	fmt.Printf("edge benchmark: %d connections, %s per target, GOMAXPROCS=%d\n", conns, duration, runtimeProcs())
	bareRes := load("http://"+bareAddr+"/api/v1/pricing", "", conns, duration)
	authRes := load("http://"+authAddr+"/api/v1/pricing", root.Secret, conns, duration)
	report("bare fiber handler", bareRes)
	report("authenticated + rate-limited GET /api/v1/pricing", authRes)
	fmt.Printf("ratio authenticated/bare: %.1f%%\n", 100*authRes.PerSecond()/bareRes.PerSecond())
	if err := usage.Flush(ctx); err != nil {
		return err
	}
	var counted int64
	if err := pool.QueryRow(ctx, `SELECT total_requests FROM api_keys WHERE id = $1`, root.ID).Scan(&counted); err != nil {
		return err
	}
	fmt.Printf("usage counter after the run: %d (requests sent: %d)\n", counted, authRes.OK+authRes.Failed)
	return nil
}

func runtimeProcs() int { return numProcs() }

func report(name string, r benchkit.Result) {
	fmt.Printf("%-50s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d ok, %d failed)\n", name, r.PerSecond(),
		benchkit.Millis(r.Percentile(0.50)), benchkit.Millis(r.Percentile(0.99)), r.OK, r.Failed)
}

func load(url, key string, conns int, d time.Duration) benchkit.Result {
	return benchkit.Drive(conns, d, func(_, _ int) *http.Request {
		req, _ := http.NewRequest("GET", url, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		return req
	})
}
