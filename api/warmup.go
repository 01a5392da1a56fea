package api

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"broll/catalog/search"
	"broll/internal/database"
	"broll/internal/metrics"
)

// States of a node's warm-up, as /readyz and broll_warmup_state name them.
const (
	// warmOff: no warm-up (BROLL_WARMUP_TIMEOUT=0, or never started);
	// readiness is what Postgres and Redis say.
	warmOff = "off"
	// warmWarming: searches are being run; /readyz answers 503.
	warmWarming = "warming"
	// warmWarm: every search of the warm-up ran.
	warmWarm = "warm"
	// warmUnfinished: the warm-up did not finish within
	// BROLL_WARMUP_TIMEOUT; the node serves anyway.
	warmUnfinished = "unfinished"
)

var warmStates = []string{warmOff, warmWarming, warmWarm, warmUnfinished}

// Triggers of a warm-up.
const (
	warmOnStart           = "start"
	warmOnPostgresRestart = "postgres_restart"
)

// restartCheckEvery is how often a warm node asks Postgres when it
// started: a server that restarted (or a failover to another one) has
// empty buffers and the node's connections are new, so the node warms
// again. /readyz asks too, at each probe.
const restartCheckEvery = 5 * time.Second

// Warmup keeps a node out of its load balancer until its catalog is warm.
// A node, or a Postgres, that has just started serves semantic search many
// times slower for its first minute (graphs not in memory, new connections
// planning and mapping everything afresh; docs/performance.md has the
// figures): /readyz answers
// 503 until a warm-up (search.Service.Warm) has run every kind of search,
// for at most BROLL_WARMUP_TIMEOUT, after which the node serves anyway and
// logs it. When Postgres restarts while the node runs, the node drops its
// connections and warms again, answering 503 meanwhile.
type Warmup struct {
	catalog *search.Service
	qe      search.QueryEmbedder
	pool    *pgxpool.Pool
	logger  *slog.Logger
	timeout time.Duration
	opts    search.WarmOptions
	metrics *warmupMetrics
	// hook, when set (by tests), is called as a warm-up begins (warming)
	// and as it ends (warm, unfinished), before the node reports the end.
	hook func(state string)

	kick chan struct{}
	mu   sync.Mutex
	// state is one of warmStates; postgres the start time of the server
	// last warmed (zero: none yet).
	state    string
	postgres time.Time
}

// newWarmup returns the warm-up of a node serving cat over pool, with
// semantic searches embedded by qe (nil: none). A timeout of 0 turns it off.
func newWarmup(cat *search.Service, qe search.QueryEmbedder, pool *pgxpool.Pool, logger *slog.Logger,
	timeout time.Duration, reg prometheus.Registerer) *Warmup {
	w := &Warmup{catalog: cat, qe: qe, pool: pool, logger: logger, timeout: timeout,
		// One search per connection the pool may open: all of them serve
		// traffic, and each pays its first search of every kind.
		opts:    search.WarmOptions{Connections: int(pool.Config().MaxConns), Prewarm: true},
		metrics: newWarmupMetrics(reg), kick: make(chan struct{}, 1), state: warmOff}
	w.metrics.state(warmOff)
	return w
}

// Start begins warming (unless BROLL_WARMUP_TIMEOUT is 0) and watches
// Postgres for restarts until ctx ends or stop is called; stop returns once
// the warm-up has stopped. /readyz answers 503 from the moment Start
// returns until the warm-up is done.
func (w *Warmup) Start(ctx context.Context) (stop func()) {
	if w.timeout <= 0 {
		return func() {}
	}
	w.set(warmWarming)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// run warms at start, then again after each Postgres restart.
func (w *Warmup) run(ctx context.Context) {
	tick := time.NewTicker(restartCheckEvery)
	defer tick.Stop()
	trigger := warmOnStart
	for {
		w.warm(ctx, trigger)
		for trigger = ""; trigger == ""; {
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
			case <-tick.C:
			}
			if again, err := w.restarted(ctx); err == nil && again {
				trigger = warmOnPostgresRestart
			}
		}
		w.logger.Info("postgres restarted; warming up again")
		// The pool's connections went with the old server: drop them all at
		// once rather than fail a request on each.
		w.pool.Reset()
	}
}

// warm runs warm-ups until one finishes or the bound passes: a failed one
// (Postgres away, a statement cancelled) is tried again a second later.
func (w *Warmup) warm(ctx context.Context, trigger string) {
	w.set(warmWarming)
	w.logger.Info("warming up; /readyz answers 503 until done", "trigger", trigger, "timeout", w.timeout.String(),
		"connections", w.opts.Connections)
	if w.hook != nil {
		w.hook(warmWarming)
	}
	start := time.Now()
	bounded, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	var started time.Time
	for {
		s, err := database.ServerStarted(bounded, w.pool)
		if err == nil {
			started = s
		}
		var rep search.WarmReport
		if err == nil {
			rep, err = w.catalog.Warm(bounded, w.qe, w.opts)
		}
		took := time.Since(start)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			w.finish(started, warmWarm, trigger, took)
			attrs := []any{"trigger", trigger, "duration_ms", took.Milliseconds(), "searches", rep.Searches,
				"semantic_searches", rep.Semantic, "graphs", rep.Graphs, "prewarmed_mb", rep.PrewarmedBytes >> 20, "prewarm_ms", rep.Prewarm.Milliseconds()}
			if rep.EmbedderErr != nil {
				w.logger.Warn("warm-up without semantic search: the embedder did not answer", "error", rep.EmbedderErr.Error())
			}
			w.logger.Info("warm-up done; ready", attrs...)
			return
		case bounded.Err() != nil:
			w.finish(started, warmUnfinished, trigger, took)
			w.logger.Warn("warm-up did not finish within BROLL_WARMUP_TIMEOUT; ready anyway",
				"trigger", trigger, "timeout", w.timeout.String(), "error", err.Error())
			return
		}
		w.logger.Warn("warm-up failed; trying again", "trigger", trigger, "error", err.Error())
		select {
		case <-bounded.Done():
		case <-time.After(time.Second):
		}
	}
}

// finish records the end of a warm-up of the server started at started
// (zero when it never answered) and makes the node ready.
func (w *Warmup) finish(started time.Time, state, trigger string, took time.Duration) {
	w.metrics.runs.WithLabelValues(trigger, state).Inc()
	w.metrics.duration.Set(took.Seconds())
	w.mu.Lock()
	w.postgres = started
	w.mu.Unlock()
	if w.hook != nil {
		w.hook(state)
	}
	w.set(state)
}

// restarted reports whether the server the pool reaches is not the one
// last warmed, or an error when it cannot tell (Postgres away).
func (w *Warmup) restarted(ctx context.Context) (bool, error) {
	started, err := database.ServerStarted(ctx, w.pool)
	if err != nil {
		return false, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return !started.Equal(w.postgres), nil
}

func (w *Warmup) set(state string) {
	w.mu.Lock()
	w.state = state
	w.mu.Unlock()
	w.metrics.state(state)
}

// readiness is the warm-up's part of /readyz: its state, and whether the
// node may take traffic. A warm node whose Postgres restarted since is not
// ready, though the warm-up loop has not noticed yet: the probe tells it,
// and it is not ready either while it cannot ask Postgres.
func (w *Warmup) readiness(ctx context.Context) (string, bool) {
	if w == nil {
		return warmOff, true
	}
	w.mu.Lock()
	state := w.state
	w.mu.Unlock()
	switch state {
	case warmOff:
		return state, true
	case warmWarming:
		return state, false
	}
	// A server the node cannot ask is not known to be the one warmed.
	again, err := w.restarted(ctx)
	if err != nil {
		return state, false
	}
	if again {
		select {
		case w.kick <- struct{}{}:
		default:
		}
		return warmWarming, false
	}
	return state, true
}

// warmupMetrics describe the node's warm-ups.
type warmupMetrics struct {
	states   *prometheus.GaugeVec
	duration prometheus.Gauge
	runs     *prometheus.CounterVec
}

func newWarmupMetrics(reg prometheus.Registerer) *warmupMetrics {
	m := &warmupMetrics{
		states: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: metrics.Namespace, Name: "warmup_state",
			Help: "1 for the node's warm-up state, 0 for the others: off, warming (/readyz answers 503), warm, unfinished (BROLL_WARMUP_TIMEOUT passed; serving anyway)."},
			[]string{"state"}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: metrics.Namespace, Name: "warmup_duration_seconds",
			Help: "How long the node's last warm-up took, from its start to ready (warm or unfinished)."}),
		runs: metrics.CounterVec("warmups_total",
			"Warm-ups finished, by trigger (start, postgres_restart) and result (warm, unfinished).", "trigger", "result"),
	}
	reg.MustRegister(m.states, m.duration, m.runs)
	return m
}

func (m *warmupMetrics) state(s string) {
	for _, st := range warmStates {
		v := 0.0
		if st == s {
			v = 1
		}
		m.states.WithLabelValues(st).Set(v)
	}
}
