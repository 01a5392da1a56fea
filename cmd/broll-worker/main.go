// Command broll-worker runs the background work: embedding jobs from the
// asynq queue (Ollama or the built-in embedder) and the periodic flush of
// usage counters. Scale it apart from the API nodes. It serves /healthz,
// /readyz and /metrics on BROLL_WORKER_HTTP_ADDR.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"broll/internal/config"
	"broll/internal/metrics"
	"broll/internal/probe"
	"broll/internal/redisx"
	"broll/wiring"
	"broll/worker"
)

func main() {
	// -healthcheck lets a container probe the worker without curl in the image.
	if len(os.Args) == 2 && os.Args[1] == "-healthcheck" {
		os.Exit(probe.Exit(cmp.Or(os.Getenv("BROLL_WORKER_HTTP_ADDR"), config.Defaults().WorkerHTTPAddr)))
	}
	redisx.SilenceDriver()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Getenv, os.Stderr, nil)
	stop() // before os.Exit, which skips deferred calls
	if err != nil {
		fmt.Fprintf(os.Stderr, "broll-worker: %v\n", err)
		os.Exit(1)
	}
}

// run works until ctx is cancelled, then lets running jobs finish. When
// ready is not nil the address of the health and metrics listener is sent
// on it once it is open (tests use port 0).
func run(ctx context.Context, getenv func(string) string, logOut io.Writer, ready chan<- string) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	// The worker signs webhook deliveries with the endpoints' secrets, which
	// are sealed under BROLL_SIGNING_KEY: without it, it could sign none.
	if err := cfg.RequireSigningKey(); err != nil {
		return fmt.Errorf("%w: the worker opens the sealed webhook signing secrets with it", err)
	}
	// The catalog reads clip files (probing, previews) and queues the
	// embedding of a clip whose probe changed its text.
	g, err := wiring.Open(ctx, cfg, wiring.Options{Parts: wiring.WorkerParts, Logs: logOut, Service: "broll-worker"})
	if err != nil {
		return err
	}
	defer g.Close()
	logger, pool, rdb, reg := g.Logger, g.Pool, g.Redis, g.Metrics
	metrics.RegisterQueues(reg, g.Inspector)
	// Media jobs need ffmpeg; a worker without it (the distroless image)
	// leaves them to one that has it.
	_, ffprobeErr := exec.LookPath("ffprobe")
	_, ffmpegErr := exec.LookPath("ffmpeg")
	noMedia := ffprobeErr != nil || ffmpegErr != nil
	if noMedia {
		logger.Warn("media processing off: ffprobe/ffmpeg not found; media jobs wait for a worker that has them")
	}
	w, err := worker.New(workerDeps(g), worker.Options{
		Concurrency:        cfg.WorkerConcurrency,
		PreviewConcurrency: cfg.WorkerPreviewConcurrency,
		BatchSize:          cfg.WorkerBatchSize,
		Metrics:            reg,
		NoMedia:            noMedia,

		RetryBaseDelay: cfg.EmbedRetryBaseDelay,
		RetryMaxDelay:  cfg.EmbedRetryMaxDelay,

		CollectionSweepInterval: cfg.CollectionSweepInterval,
		CalibrateInterval:       cfg.SemanticCalibrateInterval,
		RecallTarget:            cfg.SemanticRecallTarget,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.WorkerHTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.WorkerHTTPAddr, err)
	}
	srv := &http.Server{Handler: opsMux(metrics.Handler(reg), func(ctx context.Context) error {
		if err := pool.Ping(ctx); err != nil {
			return errors.New("postgres unreachable")
		}
		if err := rdb.Ping(ctx).Err(); err != nil {
			return errors.New("redis unreachable")
		}
		return nil
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("worker http listener failed", "error", err.Error())
		}
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if ready != nil {
		ready <- ln.Addr().String()
	}

	var background sync.WaitGroup
	background.Go(func() {
		g.Usage.Run(ctx, cfg.UsageFlushInterval, func(err error) {
			logger.Warn("usage flush failed", "error", err.Error())
		})
	})
	background.Go(func() { g.Deliverer.Run(ctx) })
	logger.Info("worker starting", "model", g.Embedder.Model(), "http_addr", ln.Addr().String(), "config", cfg.Summary())
	err = w.Run(ctx)
	background.Wait()
	logger.Info("worker stopped")
	return err
}

// workerDeps are what the worker takes of g, opened with
// wiring.WorkerParts.
func workerDeps(g *wiring.Services) worker.Deps {
	d := worker.Deps{Queue: g.QueueConn, Prefix: g.Config.RedisPrefix, Catalog: g.Catalog, MediaJobs: g.MediaJobs,
		Embedder: g.Embedder, Logger: g.Logger, Collections: g.Collections, Telemetry: g.Telemetry,
		Search: g.Search}
	if g.Media != nil { // the stamped copies are files in the media store
		d.Stamps = g.Stamps
	}
	if g.QueryEmbedder != nil {
		d.RecentQueries = g.QueryEmbedder
	}
	return d
}

// opsMux serves the worker's probes and metrics. /healthz says the process
// is serving (liveness); /readyz also needs Postgres and Redis.
func opsMux(reg http.Handler, ready func(context.Context) error) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if err := ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"status":"unavailable","detail":%q}`, err.Error())
			return
		}
		_, _ = io.WriteString(w, `{"status":"ready"}`)
	})
	mux.Handle("GET /metrics", reg)
	return mux
}
