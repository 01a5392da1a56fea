// Command edge measures the cost of the API edge: requests per second of
// authenticated, rate-limited v1 reads (key lookup, revocation markers,
// GCRA limiter and usage counters in Redis, then the handler) next to a
// bare fiber handler returning the same body, in one run, on the same
// machine, with the same load generator. The clip read, GET
// /api/v1/broll/:id, is the read customers make most: the clip's details,
// whether this key owns it and, if so, a signed download link. The price
// list, GET /api/v1/pricing, is the edge alone (no Postgres in the handler).
//
//	make bench-edge   (or: go run ./deploy/bench/edge -duration 5s -conns 64)
//
// With -cpuprofile the node's CPU profile is written for the clip read's
// run (go tool pprof -top FILE). It needs the local stack (DATABASE_URL,
// REDIS_URL) and works in a database of its own, created and dropped here.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing"
	"broll/deploy/bench/benchkit"
	"broll/internal/database"
	"broll/internal/money"
)

// clips is how many clips the read spreads over; the key owns every
// fourth, so a quarter of the answers carry a signed download link.
const clips = 64

func main() {
	duration := flag.Duration("duration", 5*time.Second, "how long each target is loaded")
	conns := flag.Int("conns", 64, "concurrent client connections")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the clip read's run to this file")
	flag.Parse()
	if err := run(*duration, *conns, *cpuProfile); err != nil {
		fmt.Fprintln(os.Stderr, "edge:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, conns int, cpuProfile string) error {
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
	node, g, err := sc.Node(ctx)
	if err != nil {
		return err
	}
	app, usage := node.App, node.Usage
	authAddr, stopAuth, err := benchkit.Serve(app)
	if err != nil {
		return err
	}
	defer stopAuth()

	videoIDs, err := seedClips(ctx, pool, g.Billing, root.AccountID.UUID)
	if err != nil {
		return err
	}
	authBase := "http://" + authAddr
	if err := buy(authBase, root.Secret, videoIDs); err != nil {
		return err
	}
	clipBody, err := fetch(authBase+"/api/v1/broll/"+videoIDs[0].String(), root.Secret)
	if err != nil {
		return err
	}
	pricingBody, err := fetch(authBase+"/api/v1/pricing", root.Secret)
	if err != nil {
		return err
	}
	bare := fiber.New(fiber.Config{DisableStartupMessage: true})
	bare.Get("/api/v1/broll/:id", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(clipBody)
	})
	bareAddr, stopBare, err := benchkit.Serve(bare)
	if err != nil {
		return err
	}
	defer stopBare()

	fmt.Printf("edge benchmark: %d connections, %s per target, GOMAXPROCS=%d\n", conns, duration, runtimeProcs())
	meter := benchkit.CPUMeter{Pool: pool, Redis: sc.Redis}
	bareRes := measure(ctx, meter, func() benchkit.Result {
		return load("http://"+bareAddr+"/api/v1/broll/", videoIDs, "", conns, duration)
	})
	stopProfile, err := benchkit.CPUProfile(cpuProfile)
	if err != nil {
		return err
	}
	clipRes := measure(ctx, meter, func() benchkit.Result {
		return load(authBase+"/api/v1/broll/", videoIDs, root.Secret, conns, duration)
	})
	stopProfile()
	pricingRes := measure(ctx, meter, func() benchkit.Result {
		return load(authBase+"/api/v1/pricing", nil, root.Secret, conns, duration)
	})
	report("bare fiber handler (the clip's body)", bareRes)
	report("authenticated GET /api/v1/broll/:id", clipRes)
	report("authenticated GET /api/v1/pricing", pricingRes)
	fmt.Printf("ratio clip read/bare: %.1f%%   price list/bare: %.1f%%  (bodies %d and %d bytes)\n",
		100*clipRes.PerSecond()/bareRes.PerSecond(), 100*pricingRes.PerSecond()/bareRes.PerSecond(),
		len(clipBody), len(pricingBody))
	fmt.Printf("CPU per request, bare/clip read: %.2f (this process, Redis and Postgres; steadier than req/s on a shared machine)\n",
		bareRes.cpuPerRequest().Seconds()/clipRes.cpuPerRequest().Seconds())
	if err := usage.Flush(ctx); err != nil {
		return err
	}
	var counted int64
	if err := pool.QueryRow(ctx, `SELECT total_requests FROM api_keys WHERE id = $1`, root.ID).Scan(&counted); err != nil {
		return err
	}
	// The setup's requests (purchase, two fetches) are counted too.
	sent := clipRes.OK + clipRes.Failed + pricingRes.OK + pricingRes.Failed + 3
	fmt.Printf("usage counter after the run: %d (requests sent: %d)\n", counted, sent)
	return nil
}

// seedClips inserts live clips and gives the account the balance to buy
// them.
func seedClips(ctx context.Context, pool *pgxpool.Pool, bill *billing.Service, account uuid.UUID) ([]uuid.UUID, error) {
	if _, err := pool.Exec(ctx, `
		INSERT INTO videos (title, description, tags, emotion, gender, difficulty, media_key, duration_seconds, width, height, fps)
		SELECT 'Bench clip ' || g, 'A person reacts to the news, filmed in daylight.', ARRAY['reaction', 'daylight'],
		       'happy', 'female', 'easy', 'clips/bench/' || g, 4.5, 1920, 1080, 30
		FROM generate_series(1, $1) g`, clips); err != nil {
		return nil, err
	}
	if _, err := bill.TopUp(ctx, account, money.Cents(clips*10_000), "edge benchmark"); err != nil {
		return nil, err
	}
	return database.Select(ctx, pool, pgx.RowTo[uuid.UUID], `SELECT id FROM videos ORDER BY id`)
}

// buy purchases every fourth clip with key, as a client would.
func buy(base, key string, ids []uuid.UUID) error {
	var owned []uuid.UUID
	for i := 0; i < len(ids); i += 4 {
		owned = append(owned, ids[i])
	}
	body, _ := json.Marshal(map[string]any{"video_ids": owned})
	req, _ := http.NewRequest("POST", base+"/api/v1/broll/purchase", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	_, err := do(req)
	return err
}

func fetch(url, key string) ([]byte, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	return do(req)
}

func do(req *http.Request) ([]byte, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: status %d: %s", req.Method, req.URL.Path, res.StatusCode, b)
	}
	return b, nil
}

func runtimeProcs() int { return numProcs() }

// measured is a load run with the CPU time its requests cost.
type measured struct {
	benchkit.Result
	cpu benchkit.CPUSample
}

func measure(ctx context.Context, m benchkit.CPUMeter, run func() benchkit.Result) measured {
	before := m.Sample(ctx)
	res := run()
	return measured{Result: res, cpu: m.Sample(ctx).Sub(before)}
}

// cpuPerRequest is the CPU time of one request, all parties together.
func (m measured) cpuPerRequest() time.Duration {
	n := m.OK + m.Failed
	if n == 0 {
		return 0
	}
	return m.cpu.Total() / time.Duration(n)
}

func report(name string, m measured) {
	r := m.Result
	n := max(r.OK+r.Failed, 1)
	pg := "n/a"
	if m.cpu.PostgresSeen {
		pg = fmt.Sprintf("%.0f", float64(m.cpu.Postgres.Microseconds())/float64(n))
	}
	fmt.Printf("%-38s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d ok, %d failed)  CPU µs/req: %.0f here, %.0f Redis, %s Postgres\n",
		name, r.PerSecond(), benchkit.Millis(r.Percentile(0.50)), benchkit.Millis(r.Percentile(0.99)), r.OK, r.Failed,
		float64(m.cpu.Self.Microseconds())/float64(n), float64(m.cpu.Redis.Microseconds())/float64(n), pg)
}

// load drives base, or base followed by a clip id that each request takes
// in turn.
func load(base string, ids []uuid.UUID, key string, conns int, d time.Duration) benchkit.Result {
	return benchkit.Drive(conns, d, func(w, n int) *http.Request {
		url := base
		if len(ids) > 0 {
			url += ids[(w+n)%len(ids)].String()
		}
		req, _ := http.NewRequest("GET", url, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		return req
	})
}
