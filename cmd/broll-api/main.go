// Command broll-api is the stateless HTTP node: REST v1, legacy v0, MCP,
// downloads, OpenAPI, /docs and health on BROLL_HTTP_ADDR, Prometheus
// metrics on BROLL_METRICS_ADDR. Run any number of them behind a load
// balancer.
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
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"broll/api"
	"broll/internal/config"
	"broll/internal/metrics"
	"broll/internal/probe"
	"broll/internal/redisx"
	"broll/wiring"
)

func main() {
	// -healthcheck lets a container probe the node without curl in the image.
	if len(os.Args) == 2 && os.Args[1] == "-healthcheck" {
		os.Exit(probe.Exit(cmp.Or(os.Getenv("BROLL_HTTP_ADDR"), config.Defaults().HTTPAddr)))
	}
	redisx.SilenceDriver()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Getenv, os.Stderr, nil)
	stop() // before os.Exit, which skips deferred calls
	if err != nil {
		fmt.Fprintf(os.Stderr, "broll-api: %v\n", err)
		os.Exit(1)
	}
}

// run builds every dependency from the environment and serves until ctx is
// cancelled, then drains in-flight requests. When ready is not nil the bound
// address is sent on it once the listener is open (tests use port 0).
func run(ctx context.Context, getenv func(string) string, logOut io.Writer, ready chan<- string) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	if err := cfg.RequireSigningKey(); err != nil {
		return err
	}
	g, err := wiring.Open(ctx, cfg, wiring.Options{Parts: wiring.APIParts, Logs: logOut, Service: "broll-api"})
	if err != nil {
		return err
	}
	defer g.Close()
	node, err := api.NewNode(g)
	if err != nil {
		return err
	}
	logger, usage, app := node.Logger, node.Usage, node.App
	// /readyz answers 503 until the catalog is warm (BROLL_WARMUP_TIMEOUT).
	defer node.Warmup.Start(ctx)()

	// Usage counted while Redis was unreachable lives in this process; flush
	// it (and the shared Redis counters) periodically and once at shutdown.
	usageCtx, stopUsage := context.WithCancel(context.WithoutCancel(ctx))
	var usageDone sync.WaitGroup
	usageDone.Go(func() {
		usage.Run(usageCtx, cfg.UsageFlushInterval, func(err error) {
			logger.Warn("usage flush failed", "error", err.Error())
		})
	})
	defer func() { stopUsage(); usageDone.Wait() }()

	// /metrics has its own listener: the public port is behind the load
	// balancer, and the metrics name routes, keys' traffic and revenue.
	metricsAddr := config.MetricsOff
	errc := make(chan error, 2)
	if cfg.MetricsAddr != config.MetricsOff {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("BROLL_METRICS_ADDR: listen on %s: %w", cfg.MetricsAddr, err)
		}
		metricsAddr = mln.Addr().String()
		msrv := metricsServer(node.Metrics)
		go func() {
			if err := msrv.Serve(mln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics listener: %w", err)
			}
		}()
		defer msrv.Close()
	}

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	logger.Info("api listening", "addr", ln.Addr().String(), "metrics_addr", metricsAddr, "config", cfg.Summary())
	if ready != nil {
		ready <- ln.Addr().String()
	}

	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("api shutting down", "timeout", cfg.ShutdownTimeout.String())
	if err := app.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("api stopped")
	return nil
}

// metricsServer serves the registry at /metrics and nothing else.
func metricsServer(reg *prometheus.Registry) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler(reg))
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
}
