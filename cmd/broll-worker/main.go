// Command broll-worker runs the background work: embedding jobs from the
// asynq queue (Ollama or the built-in embedder) and the periodic flush of
// usage counters. Scale it apart from the API nodes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hibiken/asynq"

	"broll/catalog"
	"broll/embed"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/logging"
	"broll/internal/redisx"
	"broll/tenancy"
	"broll/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "broll-worker: %v\n", err)
		os.Exit(1)
	}
}

// run works until ctx is cancelled, then lets running jobs finish.
func run(ctx context.Context, getenv func(string) string, logOut io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	logger := logging.New(logOut, cfg.LogLevel)

	pool, err := database.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	rdb, err := redisx.Open(cfg.RedisURL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	queueOpt, err := asynq.ParseRedisURI(cfg.RedisURL)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}

	embedder, err := embed.Select(ctx, cfg.EmbedProvider, cfg.OllamaHost, cfg.EmbedModel, logger)
	if err != nil {
		return err
	}
	w, err := worker.New(worker.Options{
		Redis:       queueOpt,
		Catalog:     catalog.New(pool, nil, nil),
		Embedder:    embedder,
		Logger:      logger,
		Concurrency: cfg.WorkerConcurrency,
	})
	if err != nil {
		return err
	}

	usage := tenancy.NewUsage(pool, rdb, cfg.RedisPrefix)
	usageDone := make(chan struct{})
	go func() {
		defer close(usageDone)
		usage.Run(ctx, cfg.UsageFlushInterval, func(err error) {
			logger.Warn("usage flush failed", "error", err.Error())
		})
	}()
	logger.Info("worker starting", "model", embedder.Model(), "config", cfg.Summary())
	err = w.Run(ctx)
	<-usageDone
	logger.Info("worker stopped")
	return err
}
