package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"broll/catalog"
	"broll/deploy/bench/benchkit"
)

// bench runs the scenarios against one catalog, one node at a time.
type bench struct {
	o      options
	sc     *benchkit.Scratch
	key    string
	binary string
	tmp    string
	env    map[string]string
	node   *nodeProc
	// rng draws the queries; every window gets other ones.
	rng *rand.Rand
}

func newBench(ctx context.Context, sc *benchkit.Scratch, o options, key string) (*bench, error) {
	tmp, err := os.MkdirTemp("", "broll-bench-warm-")
	if err != nil {
		return nil, err
	}
	binary, err := buildNode(tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	cfg := sc.Config
	env := map[string]string{
		"DATABASE_URL": sc.URL, "REDIS_URL": cfg.RedisURL, "BROLL_REDIS_PREFIX": cfg.RedisPrefix,
		"BROLL_SIGNING_KEY": cfg.SigningKey.Reveal(), "BROLL_MEDIA_DIR": filepath.Join(tmp, "media"),
		"BROLL_EMBED_PROVIDER": "builtin", "BROLL_HTTP_ADDR": "127.0.0.1:0", "BROLL_METRICS_ADDR": "127.0.0.1:0",
		"BROLL_RATE_LIMIT_PER_MINUTE": "1000000", "BROLL_ACCESS_LOG_SAMPLE": "0", "BROLL_SHUTDOWN_TIMEOUT": "5s",
	}
	return &bench{o: o, sc: sc, key: key, binary: binary, tmp: tmp, env: env, rng: rand.New(rand.NewPCG(o.seed, 7))}, nil
}

func (b *bench) close() {
	if b.node != nil {
		b.node.stop()
	}
	_ = os.RemoveAll(b.tmp)
}

// outcome is one scenario's figures.
type outcome struct {
	name string
	// readyAfter is from the node's start (or Postgres back, for live)
	// to the first /readyz 200; refused counts the 503s before it.
	readyAfter time.Duration
	refused    int
	// warmup is the node's own broll_warmup_duration_seconds (gated), and
	// prewarm the part of it pg_prewarm took (its log line).
	warmup, prewarm time.Duration
	load            load
	// warm is the same node right after the window: warm by then, and
	// measured in the same minutes, so that the machine's other work
	// weighs on both sides of the ratio alike.
	warm load
}

func (b *bench) runAll(ctx context.Context) error {
	var shared string
	if err := b.sc.Pool.QueryRow(ctx, `SELECT current_setting('shared_buffers')`).Scan(&shared); err != nil {
		return err
	}
	class := "semantic search"
	if b.o.filtered {
		class = "semantic search + emotion and gender"
	}
	var clips int
	if err := b.sc.Pool.QueryRow(ctx, `SELECT count(*) FROM videos WHERE embedding IS NOT NULL`).Scan(&clips); err != nil {
		return err
	}
	var prewarm bool
	if err := b.sc.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm')`).Scan(&prewarm); err != nil {
		return err
	}
	fmt.Printf("warm benchmark: %d clips with vectors, %s, %d clients, %s per scenario after /readyz, shared_buffers %s, pg_prewarm installed: %v\n",
		clips, class, b.o.clients, b.o.window, shared, prewarm)

	var outs []outcome
	for _, s := range b.o.scenarios {
		out, err := b.scenario(ctx, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		outs = append(outs, out)
		fmt.Printf("%s: ready after %s (%d refused probes, warm-up %s), p50 %.2f ms (first 10 s %.2f ms, first second %.2f ms), p99 %.2f ms, %d ok, %d failed; then warm: p50 %.2f ms, p99 %.2f ms\n",
			s, out.readyAfter.Round(time.Millisecond), out.refused, out.warmup.Round(time.Millisecond),
			ms(out.load.percentile(0, b.o.window, 0.5)), ms(out.load.percentile(0, 10*time.Second, 0.5)),
			ms(out.load.percentile(0, time.Second, 0.5)),
			ms(out.load.percentile(0, b.o.window, 0.99)), out.load.ok(), out.load.failed,
			ms(out.warm.percentile(0, b.o.warm, 0.5)), ms(out.warm.percentile(0, b.o.warm, 0.99)))
	}
	b.report(outs)
	return nil
}

// report prints the table: each scenario's p50 from /readyz on, over the
// first second, ten seconds and window, against the p50 of the same node
// right after (warm), and the run's mean warm p50.
func (b *bench) report(outs []outcome) {
	fmt.Println()
	fmt.Printf("| scenario | ready after | warm-up | warm p50 | first %s: p50 (x warm) | first 10 s | first second | p99, first %s | p50 per 10 s |\n", b.o.window, b.o.window)
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	var mean float64
	for _, o := range outs {
		warm := ms(o.warm.percentile(0, b.o.warm, 0.5))
		mean += warm / float64(len(outs))
		x := func(from, to time.Duration) string {
			p := ms(o.load.percentile(from, to, 0.5))
			return fmt.Sprintf("%.2f ms (%.1f)", p, p/warm)
		}
		var steps []string
		for t := time.Duration(0); t < b.o.window; t += 10 * time.Second {
			steps = append(steps, fmt.Sprintf("%.1f", ms(o.load.percentile(t, t+10*time.Second, 0.5))))
		}
		warmup := "-"
		if o.warmup > 0 {
			warmup = fmt.Sprintf("%s (prewarm %s)", o.warmup.Round(100*time.Millisecond), o.prewarm.Round(100*time.Millisecond))
		}
		fmt.Printf("| %s | %s | %s | %.2f ms | %s | %s | %s | %.2f ms | %s |\n", o.name,
			o.readyAfter.Round(100*time.Millisecond), warmup, warm, x(0, b.o.window), x(0, 10*time.Second), x(0, time.Second),
			ms(o.load.percentile(0, b.o.window, 0.99)), strings.Join(steps, " / "))
	}
	fmt.Printf("mean warm p50 of the run: %.2f ms\n", mean)
	for _, o := range outs {
		name := strings.ReplaceAll(o.name, "/", "-")
		fmt.Printf("BenchmarkWarm/%s/first-window 1 %.0f ns/op\n", name, o.load.percentile(0, b.o.window, 0.5).Seconds()*1e9)
		fmt.Printf("BenchmarkWarm/%s/warm 1 %.0f ns/op\n", name, o.warm.percentile(0, b.o.warm, 0.5).Seconds()*1e9)
	}
}

// scenario restarts what s names, waits for /readyz and measures.
func (b *bench) scenario(ctx context.Context, s string) (outcome, error) {
	what, gate, _ := strings.Cut(s, "/")
	gated := gate == "gated"
	out := outcome{name: s}
	var from time.Time
	switch what {
	case "postgres", "node":
		if b.node != nil {
			b.node.stop()
			b.node = nil
		}
		if what == "postgres" {
			if err := b.restartPostgres(ctx); err != nil {
				return out, err
			}
		}
		from = time.Now()
		if err := b.start(gated); err != nil {
			return out, err
		}
	case "live":
		if b.node == nil || b.node.gated != gated {
			if b.node != nil {
				b.node.stop()
				b.node = nil
			}
			if err := b.start(gated); err != nil {
				return out, err
			}
			if _, err := b.node.waitReady(b.o.warmupTimeout + time.Minute); err != nil {
				return out, err
			}
			// A node that has served a while, as a running one has.
			b.drive(b.o.warm)
		}
		if err := b.restartPostgres(ctx); err != nil {
			return out, err
		}
		from = time.Now()
	}
	refused, err := b.node.waitReady(b.o.warmupTimeout + time.Minute)
	if err != nil {
		return out, err
	}
	out.readyAfter, out.refused = time.Since(from), refused
	if gated {
		out.warmup = time.Duration(b.node.metric("broll_warmup_duration_seconds") * float64(time.Second))
		if rec := b.node.lastLogged("warm-up done; ready"); rec != nil {
			ms, _ := rec["prewarm_ms"].(float64)
			out.prewarm = time.Duration(ms) * time.Millisecond
		}
	}
	out.load = b.drive(b.o.window)
	out.warm = b.drive(b.o.warm)
	return out, nil
}

func (b *bench) start(gated bool) error {
	env := make(map[string]string, len(b.env)+1)
	for k, v := range b.env {
		env[k] = v
	}
	env["BROLL_WARMUP_TIMEOUT"] = "0s"
	if gated {
		env["BROLL_WARMUP_TIMEOUT"] = b.o.warmupTimeout.String()
	}
	n, err := startNode(b.binary, env, gated)
	if err != nil {
		return err
	}
	b.node = n
	return nil
}

// restartPostgres runs the restart command and checks that the server
// DATABASE_URL names did restart.
func (b *bench) restartPostgres(ctx context.Context) error {
	before, err := postgresStarted(ctx, b.sc.URL)
	if err != nil {
		return err
	}
	// Dropped before the restart too: a running node may notice the new
	// server and start warming before the drop after it is done.
	if b.o.dropFileCache {
		if _, err := dropFileCache(ctx, b.sc.URL); err != nil {
			return fmt.Errorf("-drop-file-cache: %w", err)
		}
	}
	cmd := exec.Command("sh", "-c", b.o.restartCmd)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("-restart-postgres %q: %w", b.o.restartCmd, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		after, err := postgresStarted(ctx, b.sc.URL)
		if err == nil {
			if !after.After(before) {
				return fmt.Errorf("-restart-postgres %q did not restart the Postgres of DATABASE_URL (started %s, still)", b.o.restartCmd, before)
			}
			// The benchmark's own connections went with the old server.
			b.sc.Pool.Reset()
			if b.o.dropFileCache {
				n, err := dropFileCache(ctx, b.sc.URL)
				if err != nil {
					return fmt.Errorf("-drop-file-cache: %w", err)
				}
				fmt.Printf("dropped %d MB of the database's files from the page cache\n", n>>20)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not come back: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func postgresStarted(ctx context.Context, dbURL string) (time.Time, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return time.Time{}, err
	}
	defer conn.Close(ctx)
	var t time.Time
	err = conn.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&t)
	return t, err
}

// load is one closed-loop run: each successful request's start (from the
// run's start) and latency.
type load struct {
	at, took []time.Duration
	failed   int
}

func (l load) ok() int { return len(l.at) }

// percentile of the latencies of requests started in [from, to).
func (l load) percentile(from, to time.Duration, p float64) time.Duration {
	var xs []time.Duration
	for i, t := range l.at {
		if t >= from && t < to {
			xs = append(xs, l.took[i])
		}
	}
	if len(xs) == 0 {
		return 0
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	return xs[int(float64(len(xs)-1)*p)]
}

// drive loads the node with o.clients closed loops of semantic searches
// for d.
func (b *bench) drive(d time.Duration) load {
	tr := &http.Transport{MaxIdleConnsPerHost: b.o.clients, MaxConnsPerHost: b.o.clients}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	seeds := make([]uint64, b.o.clients)
	for i := range seeds {
		seeds[i] = b.rng.Uint64()
	}
	emotions, genders := catalog.Emotions(), catalog.Genders()
	var mu sync.Mutex
	var all load
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range b.o.clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seeds[w], 1))
			var mine load
			for time.Now().Before(deadline) {
				v := url.Values{"semantic_search": {benchkit.SemanticQuery(rng)}, "limit": {"10"}}
				if b.o.filtered {
					v.Set("emotion", emotions[rng.IntN(len(emotions))])
					v.Set("gender", genders[rng.IntN(len(genders))])
				}
				req, _ := http.NewRequest("GET", b.node.url+"/api/v1/broll?"+v.Encode(), nil)
				req.Header.Set("Authorization", "Bearer "+b.key)
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					mine.failed++
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					mine.failed++
					continue
				}
				mine.at = append(mine.at, t0.Sub(start))
				mine.took = append(mine.took, time.Since(t0))
			}
			mu.Lock()
			all.at = append(all.at, mine.at...)
			all.took = append(all.took, mine.took...)
			all.failed += mine.failed
			mu.Unlock()
		})
	}
	wg.Wait()
	return all
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
