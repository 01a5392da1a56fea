// Command warm measures what a load balancer's clients get from an API node
// that has just started, or whose Postgres has just restarted: the p50 of
// semantic search over HTTP in the first minute after /readyz said ready
// (when a load balancer sends traffic), against the warm figure of the same
// run, with the warm-up gate (BROLL_WARMUP_TIMEOUT, the default) and
// without it (BROLL_WARMUP_TIMEOUT=0: ready as soon as Postgres answers).
//
//	make bench-warm   (or: go run ./deploy/bench/warm -reuse URL)
//
// Each scenario restarts what it names, waits for /readyz as a load
// balancer does, then loads the node with -clients concurrent semantic
// searches for -window:
//
//   - postgres: the node stopped, Postgres restarted (-restart-postgres),
//     a new node started;
//   - node: a new node over a Postgres that kept running;
//   - live: Postgres restarted under a running node, which notices and
//     warms again (the gated node answers /readyz 503 meanwhile).
//
// Right after its window, each scenario measures the same node for -warm
// (warm by then): the ratio of the two is taken within the same minutes,
// so the machine's other work weighs on both alike. The node is the real
// cmd/broll-api binary, built here, so that a restart is a new process with
// new connections. A Postgres restart leaves the files in the machine's
// page cache; -drop-file-cache drops them too, as a machine restart or a
// failover to a server that never read them would.
//
// The benchmark restarts Postgres: by default the local stack's
// (deploy/local/stack.sh restart-postgres), which would break everything
// else using that cluster. Run it on a stack of its own:
//
//	export BROLL_STACK_DIR=$PWD/.benchstack BROLL_PG_PORT=55441 BROLL_REDIS_PORT=56406
//	deploy/local/stack.sh up && set -a && . .benchstack/env && set +a
//	go run ./deploy/bench/warm -clips 100000 -keep
//
// It refuses to measure when the restart command did not restart the
// Postgres that DATABASE_URL names. -prewarm on|off installs or drops
// pg_prewarm in the measured database first, to compare a warm-up with and
// without it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"broll/deploy/bench/benchkit"
	"broll/embed"
)

type options struct {
	clips, clients int
	seed           uint64
	keep           bool
	reuse          string
	window, warm   time.Duration
	restartCmd     string
	scenarios      []string
	prewarm        string
	warmupTimeout  time.Duration
	filtered       bool
	dropFileCache  bool
}

var allScenarios = []string{"postgres/gated", "postgres/ungated", "node/gated", "node/ungated", "live/gated", "live/ungated"}

func main() {
	var o options
	var scenarios string
	var seed int64
	flag.IntVar(&o.clips, "clips", 100_000, "clips imported through the import path, all embedded (without -reuse)")
	flag.BoolVar(&o.keep, "keep", false, "keep the imported catalog (its URL is printed) for -reuse")
	flag.StringVar(&o.reuse, "reuse", "", "the URL of a catalog an earlier run kept (-keep here or in deploy/bench/search): no import")
	flag.IntVar(&o.clients, "clients", 8, "concurrent HTTP clients")
	flag.DurationVar(&o.window, "window", time.Minute, "how long each scenario is measured after /readyz said ready")
	flag.DurationVar(&o.warm, "warm", 20*time.Second, "how long the warm figure is measured, on the same node right after each window")
	flag.StringVar(&o.restartCmd, "restart-postgres", "deploy/local/stack.sh restart-postgres",
		"shell command that restarts the Postgres DATABASE_URL names")
	flag.StringVar(&scenarios, "scenarios", strings.Join(allScenarios, ","), "scenarios to run, in order")
	flag.StringVar(&o.prewarm, "prewarm", "keep", "pg_prewarm in the measured database: on (install it), off (drop it) or keep")
	flag.DurationVar(&o.warmupTimeout, "warmup-timeout", time.Minute, "BROLL_WARMUP_TIMEOUT of the gated nodes")
	flag.BoolVar(&o.filtered, "filtered", false, "semantic searches with an emotion and a gender filter instead of none")
	flag.BoolVar(&o.dropFileCache, "drop-file-cache", false, "after each Postgres restart, drop the measured database's files from the machine's page cache "+
		"(as a machine restart or a failover to a server that never read them would): needs read access to the data directory")
	flag.Int64Var(&seed, "seed", 1, "random seed of the catalog and the queries")
	flag.Parse()
	o.seed = uint64(seed)
	for _, s := range strings.Split(scenarios, ",") {
		s = strings.TrimSpace(s)
		if !contains(allScenarios, s) {
			fmt.Fprintf(os.Stderr, "warm: unknown scenario %q (known: %s)\n", s, strings.Join(allScenarios, ", "))
			os.Exit(2)
		}
		o.scenarios = append(o.scenarios, s)
	}
	if o.prewarm != "on" && o.prewarm != "off" && o.prewarm != "keep" {
		fmt.Fprintln(os.Stderr, "warm: -prewarm must be on, off or keep")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "warm:", err)
		os.Exit(1)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func run(o options) error {
	ctx := context.Background()
	open := func() (*benchkit.Scratch, error) { return benchkit.OpenScratch(ctx, 0, o.keep) }
	if o.reuse != "" {
		open = func() (*benchkit.Scratch, error) { return benchkit.OpenKept(ctx, o.reuse, 0) }
	}
	sc, err := open()
	if err != nil {
		return err
	}
	defer sc.Close()
	if o.reuse == "" {
		start := time.Now()
		if err := benchkit.ImportCatalog(ctx, sc.Pool, o.clips, o.seed); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		fmt.Printf("import: %d clips in %s\n", o.clips, time.Since(start).Round(time.Second))
		start = time.Now()
		if err := benchkit.EmbedCatalog(ctx, sc.Pool, embed.NewBuiltin(), o.clips); err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		fmt.Printf("embeddings and HNSW builds: %s\n", time.Since(start).Round(time.Second))
		if _, err := sc.Pool.Exec(ctx, `VACUUM ANALYZE videos, video_terms`); err != nil {
			return err
		}
	}
	switch o.prewarm {
	case "on":
		_, err = sc.Pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_prewarm`)
	case "off":
		_, err = sc.Pool.Exec(ctx, `DROP EXTENSION IF EXISTS pg_prewarm`)
	}
	if err != nil {
		return fmt.Errorf("-prewarm %s: %w", o.prewarm, err)
	}
	root, err := sc.Account(ctx)
	if err != nil {
		return err
	}
	b, err := newBench(ctx, sc, o, root.Secret)
	if err != nil {
		return err
	}
	defer b.close()
	return b.runAll(ctx)
}
