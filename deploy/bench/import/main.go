// Command import measures how long clips take from import to searchable:
// it renders a few hundred distinct real MP4 files with ffmpeg, writes an
// import file of -clips lines naming them (clip i names distinct file
// i%-distinct, with a preview and thumbnail unless -no-previews), and runs
// the real programs: `brollctl clips import` of that file while one API
// node and one worker run beside it, on a database of their own and a
// Redis of their own. It reports the time and clips per second of each
// stage (rows imported, files probed, clips embedded, clips searchable),
// checks the last clip through the API's keyword search, and then times
// one clip posted through the ops API until a search finds it.
//
//	make bench-import   (or: go run ./deploy/bench/import -clips 100000 -distinct 200)
//
// It needs the local stack (DATABASE_URL; REDIS_URL is replaced by the
// benchmark's own Redis), ffmpeg and redis-server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"broll/deploy/bench/benchkit"
	"broll/internal/freeport"
)

type options struct {
	clips, distinct, batch, concurrency int
	noPreviews, keep                    bool
	timeout                             time.Duration
	// src is the source tree the programs are built from: another
	// checkout measures another build with the same harness.
	src string
}

func main() {
	var o options
	flag.IntVar(&o.clips, "clips", 100000, "clips to import")
	flag.IntVar(&o.distinct, "distinct", 200, "distinct MP4 files rendered; the clips name them in turn")
	flag.IntVar(&o.batch, "batch", 0, "BROLL_WORKER_BATCH_SIZE (0: the default)")
	flag.IntVar(&o.concurrency, "concurrency", 0, "BROLL_WORKER_CONCURRENCY (0: the default)")
	flag.BoolVar(&o.noPreviews, "no-previews", false, "lines bring no preview or thumbnail: the worker makes them")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database (its URL is printed)")
	flag.DurationVar(&o.timeout, "timeout", time.Hour, "give up when the catalog is not searchable by then")
	flag.StringVar(&o.src, "src", ".", "source tree to build broll-api, broll-worker and brollctl from")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench import:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	// Ctrl-C stops the run and still drops the database and stops the
	// programs it started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "broll-bench-import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "bin")
	if err := buildBinaries(o.src, bin); err != nil {
		return err
	}
	redis, redisURL, err := startRedis(work)
	if err != nil {
		return err
	}
	defer redis.stop()
	// The scratch world opens the benchmark's Redis, not the stack's.
	if err := os.Setenv("REDIS_URL", redisURL); err != nil {
		return err
	}
	sc, err := benchkit.OpenScratch(context.WithoutCancel(ctx), 0, o.keep)
	if err != nil {
		return err
	}
	defer sc.Close()
	root, err := sc.Account(ctx)
	if err != nil {
		return err
	}
	// The database's services, as the composition root builds them.
	g, err := sc.Services(ctx, 0)
	if err != nil {
		return err
	}
	ops, err := g.Tenancy.CreateOpsKey(ctx, "bench")
	if err != nil {
		return err
	}

	importDir := filepath.Join(work, "import")
	t := time.Now()
	files, err := renderMedia(importDir, o.distinct)
	if err != nil {
		return err
	}
	lines := filepath.Join(importDir, "clips.jsonl")
	if err := writeLines(lines, o.clips, files, !o.noPreviews); err != nil {
		return err
	}
	fmt.Printf("rendered %d distinct MP4 files (with preview and thumbnail) in %s; %d import lines\n",
		len(files), time.Since(t).Round(time.Second), o.clips)

	port, err := freeport.Pick()
	if err != nil {
		return err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	env := map[string]string{
		"DATABASE_URL": sc.URL, "REDIS_URL": redisURL, "BROLL_SIGNING_KEY": sc.Config.SigningKey.Reveal(),
		"BROLL_MEDIA_DIR": sc.Config.MediaDir, "BROLL_IMPORT_DIR": importDir, "BROLL_EMBED_PROVIDER": "builtin",
		"BROLL_HTTP_ADDR": fmt.Sprintf("127.0.0.1:%d", port), "BROLL_METRICS_ADDR": "127.0.0.1:0",
		"BROLL_WORKER_HTTP_ADDR": "127.0.0.1:0", "BROLL_LOG_LEVEL": "warn",
		// Every key and queue of the programs under the scratch world's
		// prefix, as in a deployment that shares its Redis.
		"BROLL_REDIS_PREFIX": sc.Config.RedisPrefix,
	}
	if o.batch > 0 {
		env["BROLL_WORKER_BATCH_SIZE"] = strconv.Itoa(o.batch)
	}
	if o.concurrency > 0 {
		env["BROLL_WORKER_CONCURRENCY"] = strconv.Itoa(o.concurrency)
	}
	api, err := start(work, "api", filepath.Join(bin, "broll-api"), env)
	if err != nil {
		return err
	}
	defer api.stop()
	if err := waitHealthy(base + "/healthz"); err != nil {
		return fmt.Errorf("api (log %s): %w", api.log, err)
	}
	worker, err := start(work, "worker", filepath.Join(bin, "broll-worker"), env)
	if err != nil {
		return err
	}
	defer worker.stop()

	fmt.Printf("importing %d clips: brollctl clips import, API and worker running (batch %s, concurrency %s)\n",
		o.clips, orDefault(env["BROLL_WORKER_BATCH_SIZE"]), orDefault(env["BROLL_WORKER_CONCURRENCY"]))
	start := time.Now()
	if _, err := ctl(ctx, filepath.Join(bin, "brollctl"), env, "clips", "import", lines); err != nil {
		return err
	}
	imported := time.Since(start)
	fmt.Printf("  rows imported (files copied, rows written, jobs queued) after %s\n", imported.Round(time.Millisecond))
	st, err := watch(ctx, sc.Pool, o.clips, start, o.timeout)
	if err != nil {
		return err
	}
	c := client{base: base}
	if err := c.findsLast(root.Secret, o.clips); err != nil {
		return err
	}

	fmt.Printf("\n%d clips, %d distinct MP4 files, previews and thumbnails %s; GOMAXPROCS API, worker and Postgres on this machine\n",
		o.clips, len(files), map[bool]string{true: "made by the worker", false: "given by the import"}[o.noPreviews])
	fmt.Printf("| stage | done after | clips/s |\n|---|---|---|\n")
	row := func(name string, d time.Duration, rate float64) {
		fmt.Printf("| %s | %s | %.0f |\n", name, d.Round(100*time.Millisecond), rate)
	}
	n := float64(o.clips)
	row("import rows (brollctl clips import)", imported, n/imported.Seconds())
	row("probed (media ready), worker after import", st.probed, n/(st.probed-imported).Seconds())
	row("embedded", st.embedded, n/(st.embedded-imported).Seconds())
	row("searchable (on sale with vector), end to end", st.searchable, n/st.searchable.Seconds())
	if st.failed > 0 {
		fmt.Printf("%d clips failed their probe\n", st.failed)
	}

	for _, previews := range []bool{true, false} {
		took, err := c.lonePost(ops.Secret, root.Secret, files[0], previews)
		if err != nil {
			return err
		}
		fmt.Printf("one clip posted through POST /api/ops/v1/videos (%s): searchable after %s\n",
			map[bool]string{true: "with preview and thumbnail", false: "without: they follow"}[previews], took.Round(time.Millisecond))
	}
	return nil
}

func orDefault(v string) string {
	if v == "" {
		return "default"
	}
	return v
}
