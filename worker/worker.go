// Package worker is the asynq adapter: it runs the task server and turns
// queued tasks into calls on the domain packages (embedding new and changed
// clips through catalog and embed). It holds no business rules of its own.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"broll/billing/license"
	"broll/catalog"
	"broll/catalog/mediajobs"
	"broll/catalog/search"
	"broll/collections"
	"broll/embed"
	"broll/internal/tasks"
	"broll/internal/telemetry"
)

// Defaults for the zero values of Options.
const (
	DefaultConcurrency        = 4
	DefaultPreviewConcurrency = 1
	DefaultBatchSize          = 100
	DefaultBatchTimeout       = 4 * time.Minute // under the embed task's 5-minute timeout
	DefaultPollInterval       = 200 * time.Millisecond
	DefaultRetryBaseDelay     = time.Second
	DefaultRetryMaxDelay      = 5 * time.Minute
	DefaultShutdownTimeout    = 20 * time.Second
	DefaultRelayInterval      = time.Second
	DefaultStampSweepInterval = time.Minute
	// DefaultCollectionSweepInterval is how often revoked keys'
	// collections past their retention are removed.
	DefaultCollectionSweepInterval = time.Hour
	// DefaultCalibrateInterval is how often semantic search's candidate
	// list is calibrated.
	DefaultCalibrateInterval = time.Hour
)

// Options tune a Worker; the zero value is production's defaults. What it
// works with (the queues, the catalog, the embedder) are its Deps.
type Options struct {
	// Logger receives the worker's logs; nil: Deps.Logger.
	Logger *slog.Logger

	// Concurrency is how many embedding and media tasks (each a batch of
	// clips) run at once.
	Concurrency int
	// PreviewConcurrency is how many preview tasks (ffmpeg encoding the
	// previews and thumbnails an import did not bring) run at once, on
	// their own server, so that encoding never takes the slots of probing
	// and embedding.
	PreviewConcurrency int
	// BatchSize caps the clips per embedder call.
	BatchSize int
	// BatchTimeout bounds one embedding task: load texts, embed, store.
	BatchTimeout time.Duration

	// PollInterval is how often empty queues are checked: it is most of the
	// delay between a clip's import and its being searchable.
	PollInterval time.Duration
	// A failed embedding is retried after RetryBaseDelay, then twice that,
	// and so on up to RetryMaxDelay.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// Metrics, when set, receives the worker's job and batch metrics.
	Metrics prometheus.Registerer
	// ShutdownTimeout is how long in-flight tasks may finish after Run's
	// context ends; tasks still running then go back to their queue.
	ShutdownTimeout time.Duration
	// RelayInterval is how often the worker moves the jobs recorded in the
	// job outbox (those their writer could not queue: Redis was away) to
	// the queues.
	RelayInterval time.Duration
	// StampSweepInterval is how often the worker looks for recent live
	// purchases without a licence-stamped copy and asks for theirs
	// (license.Stamper.SweepLost): the requests lost while Redis was away.
	StampSweepInterval time.Duration
	// CollectionSweepInterval is how often the worker removes the
	// collections of keys revoked longer ago than their retention
	// (collections.Service.SweepRevoked).
	CollectionSweepInterval time.Duration
	// CalibrateInterval is how often the worker calibrates semantic
	// search's candidate list (search.Service.Calibrate), the first at
	// start.
	CalibrateInterval time.Duration
	// RecallTarget is the mean recall@10 the calibration chooses for; 0
	// calibrates nothing.
	RecallTarget float64
	// NoMedia leaves the media queue alone (no ffmpeg on this machine):
	// its tasks wait for a worker that has it.
	NoMedia bool
}

func (o *Options) withDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	setDefault(&o.Concurrency, DefaultConcurrency)
	setDefault(&o.PreviewConcurrency, DefaultPreviewConcurrency)
	setDefault(&o.BatchSize, DefaultBatchSize)
	setDefault(&o.BatchTimeout, DefaultBatchTimeout)
	setDefault(&o.PollInterval, DefaultPollInterval)
	setDefault(&o.RetryBaseDelay, DefaultRetryBaseDelay)
	setDefault(&o.RetryMaxDelay, DefaultRetryMaxDelay)
	setDefault(&o.ShutdownTimeout, DefaultShutdownTimeout)
	setDefault(&o.RelayInterval, DefaultRelayInterval)
	setDefault(&o.StampSweepInterval, DefaultStampSweepInterval)
	setDefault(&o.CollectionSweepInterval, DefaultCollectionSweepInterval)
	setDefault(&o.CalibrateInterval, DefaultCalibrateInterval)
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// clipStore is what the embed handler needs of the catalog.
type clipStore interface {
	EmbeddingInputs(ctx context.Context, ids []uuid.UUID) ([]catalog.EmbedInput, error)
	StoreEmbeddings(ctx context.Context, model string, embs []catalog.Embedding) error
	MarkEmbeddingFailed(ctx context.Context, id uuid.UUID, reason string) error
}

// RecentQueries are the query vectors customers asked lately
// (embed.QueryCache.Recent).
type RecentQueries interface {
	Recent(ctx context.Context, n int) ([][]float32, error)
}

// Worker processes the asynq queues of the service.
type Worker struct {
	opts Options
	// queue is the connection the task server opens its own clients with.
	queue asynq.RedisConnOpt
	// prefix is the deployment's BROLL_REDIS_PREFIX: the worker takes tasks
	// from its queues (tasks.EmbedQueue, tasks.MediaQueue).
	prefix  string
	catalog *catalog.Service
	// media runs the media jobs of the catalog's clips.
	media    *mediajobs.Service
	embedder embed.Embedder
	store    clipStore
	logger   *slog.Logger
	// stamps makes the licence-stamped copies of purchased files.
	stamps *license.Stamper
	// collections sweeps revoked keys' collections (nil: none).
	collections *collections.Service
	// search calibrates semantic search's candidate list (nil: none),
	// on recentQueries when there are enough (nil: clips' own vectors).
	search        *search.Service
	recentQueries RecentQueries
	handlers      map[string]asynq.Handler
	// previewHandlers run on a server of their own (PreviewConcurrency).
	previewHandlers map[string]asynq.Handler
	metrics         *workerMetrics
	// tracer starts the spans of tasks and steps; tracing says whether it
	// records anything, so that an untraced worker reads no payload twice.
	tracer  trace.Tracer
	tracing bool
}

// Deps are what a worker works with. cmd/broll-worker takes them from
// the services of the composition root, opened with wiring.WorkerParts.
type Deps struct {
	// Queue is REDIS_URL's asynq connection, with which the task server
	// opens connections of its own. Required.
	Queue asynq.RedisConnOpt
	// Prefix is the deployment's BROLL_REDIS_PREFIX: the worker takes tasks
	// from its queues (tasks.EmbedQueue, tasks.MediaQueue).
	Prefix string
	// Catalog stores the embeddings and relays the job outbox. Required.
	Catalog *catalog.Service
	// MediaJobs runs the media jobs of the catalog's clips; required
	// unless Options.NoMedia.
	MediaJobs *mediajobs.Service
	// Embedder embeds the clips. Required.
	Embedder embed.Embedder
	// Stamps makes the licence-stamped copies of purchased files; nil
	// (no media store) leaves the stamp tasks to a worker that has one.
	Stamps *license.Stamper
	// Collections removes revoked keys' collections past their retention;
	// nil leaves that to another worker.
	Collections *collections.Service
	// Search calibrates semantic search's candidate list on the catalog's
	// vectors of the embedder's model; nil leaves that to another worker.
	Search *search.Service
	// RecentQueries hands the calibration customers' recent query
	// vectors (the query cache); nil: sampled clips' own vectors only.
	RecentQueries RecentQueries
	// Logger is the worker's log unless Options.Logger names another; nil
	// drops it.
	Logger *slog.Logger
	// Telemetry traces the tasks and their steps (trace.go); nil traces
	// none.
	Telemetry *telemetry.Provider
}

// New returns a worker over d, tuned by opts; Run starts it.
func New(d Deps, opts Options) (*Worker, error) {
	switch {
	case d.Queue == nil:
		return nil, errors.New("worker: Redis connection is required (REDIS_URL)")
	case d.Catalog == nil:
		return nil, errors.New("worker: a catalog is required")
	case d.Embedder == nil:
		return nil, errors.New("worker: an embedder is required")
	case d.MediaJobs == nil && !opts.NoMedia:
		return nil, errors.New("worker: the media jobs are required (or Options.NoMedia)")
	}
	if opts.Logger == nil {
		opts.Logger = d.Logger
	}
	opts.withDefaults()
	w := &Worker{opts: opts, queue: d.Queue, prefix: d.Prefix, catalog: d.Catalog, media: d.MediaJobs, embedder: d.Embedder,
		store: d.Catalog, logger: opts.Logger, metrics: newWorkerMetrics(opts.Metrics), collections: d.Collections,
		search: d.Search, recentQueries: d.RecentQueries, tracer: d.Telemetry.Tracer("broll/worker"), tracing: d.Telemetry.On()}
	w.handlers = map[string]asynq.Handler{
		tasks.TaskEmbedClips: asynq.HandlerFunc(w.handleEmbedClips),
		tasks.TaskEmbedClip:  asynq.HandlerFunc(w.handleEmbedClips),
	}
	if !opts.NoMedia {
		w.handlers[tasks.TaskProbeClips] = asynq.HandlerFunc(w.handleProbeClips)
		w.handlers[tasks.TaskProcessMedia] = asynq.HandlerFunc(w.handleProcessMedia)
		w.handlers[tasks.TaskReprobeClips] = asynq.HandlerFunc(w.handleReprobeClips)
		w.previewHandlers = map[string]asynq.Handler{tasks.TaskMakePreviews: asynq.HandlerFunc(w.handleMakePreviews)}
		if d.Stamps != nil {
			w.stamps = d.Stamps
			w.handlers[tasks.TaskStampLicense] = asynq.HandlerFunc(w.handleStampLicense)
			w.handlers[tasks.TaskStampBatch] = asynq.HandlerFunc(w.handleStampBatch)
		}
	}
	return w, nil
}

// Run processes tasks until ctx ends, then shuts down gracefully: no new
// tasks are taken, in-flight ones get ShutdownTimeout to finish, and those
// still running are pushed back to their queue for the next worker. A
// worker that dies without shutting down loses nothing either: asynq gives
// its tasks to another worker once their lease expires. Run once per Worker.
func (w *Worker) Run(ctx context.Context) error {
	o := w.opts
	// The worker owns the Redis client: asynq closes one it made itself
	// only after a successful Start, so a failed Ping would leak it.
	rc, ok := w.queue.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		return errors.New("worker: Redis connection option makes no Redis client")
	}
	defer rc.Close()
	srv := w.newServer(ctx, rc, o.Concurrency, w.queues())
	if err := srv.Ping(); err != nil {
		return fmt.Errorf("worker: redis: %w", err)
	}
	if err := srv.Start(w.newMux(w.handlers)); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	servers := []*asynq.Server{srv}
	if w.previewHandlers != nil {
		// Encoding previews takes a core per ffmpeg: a server of its own
		// bounds it apart from the probing and embedding slots.
		previews := w.newServer(ctx, rc, o.PreviewConcurrency, map[string]int{tasks.PreviewsQueue(w.prefix): 1})
		if err := previews.Start(w.newMux(w.previewHandlers)); err != nil {
			srv.Shutdown()
			return fmt.Errorf("worker: start: %w", err)
		}
		servers = append(servers, previews)
	}
	w.logger.Info("worker started", "model", w.embedder.Model(), "concurrency", o.Concurrency,
		"preview_concurrency", o.PreviewConcurrency, "batch_size", o.BatchSize, "poll_interval", o.PollInterval)
	var relay sync.WaitGroup
	relay.Go(func() { w.relayJobs(ctx) })
	if w.stamps != nil {
		relay.Go(func() { w.sweepStamps(ctx) })
	}
	if w.collections != nil {
		relay.Go(func() { w.sweepCollections(ctx) })
	}
	if w.search != nil && o.RecallTarget > 0 {
		relay.Go(func() { w.calibrateSearch(ctx) })
	}
	defer relay.Wait()
	<-ctx.Done()
	w.logger.Info("worker stopping", "shutdown_timeout", o.ShutdownTimeout)
	var stopping sync.WaitGroup
	for _, s := range servers {
		stopping.Go(s.Shutdown)
	}
	stopping.Wait()
	w.logger.Info("worker stopped")
	return nil
}

// newServer is an asynq server over rc running concurrency tasks at once
// from queues.
func (w *Worker) newServer(ctx context.Context, rc redis.UniversalClient, concurrency int, queues map[string]int) *asynq.Server {
	o := w.opts
	return asynq.NewServerFromRedisClient(rc, asynq.Config{
		// Handlers get a context that outlives ctx, so that cancelling Run
		// lets in-flight tasks finish; asynq cancels it itself after
		// ShutdownTimeout.
		BaseContext: func() context.Context { return context.WithoutCancel(ctx) },
		Concurrency: concurrency,
		Queues:      queues,
		// asynq polls rather than blocks on Redis: the interval is the
		// latency of an idle worker.
		TaskCheckInterval: o.PollInterval,
		// Retries wait in a sorted set until the forwarder moves them back;
		// check it about as often as the shortest retry delay.
		DelayedTaskCheckInterval: max(o.PollInterval, min(time.Second, o.RetryBaseDelay)),
		RetryDelayFunc:           backoff(o.RetryBaseDelay, o.RetryMaxDelay),
		ShutdownTimeout:          o.ShutdownTimeout,
		ErrorHandler:             asynq.ErrorHandlerFunc(w.logTaskError),
		Logger:                   asynqLogger{w.logger.With("component", "asynq")},
		LogLevel:                 asynq.InfoLevel,
	})
}

func (w *Worker) newMux(handlers map[string]asynq.Handler) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	if w.tracing {
		mux.Use(w.traceTasks)
	}
	for typ, h := range handlers {
		mux.Handle(typ, h)
	}
	return mux
}

// queues are the queues of the main server, with their priorities: its
// deployment's (Deps.Prefix, BROLL_REDIS_PREFIX), new clips' media batches (which embed them too) first; and
// at the lowest priority the unprefixed queues that releases before queue
// names carried the prefix wrote to, so that the tasks waiting there when
// a deployment upgrades are still done. Nothing queues to those any more;
// once they are empty everywhere (asynq_queue_size{queue="embed"} and
// "media" at 0) they can go.
func (w *Worker) queues() map[string]int {
	p := w.prefix
	q := map[string]int{tasks.EmbedQueue(p): 2}
	if !w.opts.NoMedia {
		q[tasks.MediaQueue(p)] = 3
	}
	if p != "" {
		q[tasks.QueueEmbed] = 1
		if !w.opts.NoMedia {
			q[tasks.QueueMedia] = 1
		}
	}
	return q
}

// backoff doubles the delay from base with each retry, up to limit. Clips
// that failed together come back together and are embedded in one batch.
func backoff(base, limit time.Duration) asynq.RetryDelayFunc {
	return func(n int, _ error, _ *asynq.Task) time.Duration {
		n = max(n, 0)
		if n >= 32 {
			return limit
		}
		d := base << n
		if d <= 0 || d > limit {
			return limit
		}
		return d
	}
}

func (w *Worker) logTaskError(ctx context.Context, t *asynq.Task, err error) {
	id, _ := asynq.GetTaskID(ctx)
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	w.logger.Warn("task failed", "type", t.Type(), "task_id", id, "retried", retried, "max_retry", maxRetry, "err", err)
}

// asynqLogger routes asynq's own logs through the service's slog logger.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }

// Fatal only logs: asynq's processing never calls it, and exiting from
// inside a library would skip the binary's graceful shutdown.
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...), "fatal", true) }

// relayJobs moves the jobs of the job outbox to the queues every
// RelayInterval until ctx ends: the work of changes whose writer found
// Redis away (catalog.RelayJobs). A failure is logged once until the relay
// works again, then retried at the next tick.
func (w *Worker) relayJobs(ctx context.Context) {
	t := time.NewTicker(w.opts.RelayInterval)
	defer t.Stop()
	failing := false
	for {
		n, err := w.catalog.RelayJobs(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			w.logger.Warn("job relay failed; the jobs stay recorded", "err", err)
			failing = true
		case err == nil:
			if failing || n > 0 {
				w.logger.Info("job relay queued recorded jobs", "jobs", n)
			}
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
