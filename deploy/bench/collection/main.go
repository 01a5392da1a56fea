// Command collection measures reading a collection against the default
// catalog list, over HTTP through a real API node: the first page of a
// collection of -items clips (GET /api/v1/collections/{id}, at its
// default page of 20 clips, the list's, and at 50) next to the default
// list's first page (GET /api/v1/broll: 20 clips, newest first) over a
// catalog of -clips clips, with the same load generator, one after the
// other. The goal
// (issue 43) is a collection's first page within 2x of the default list's
// p50. It also prints the plan of the items page's statement, which must
// read the index collection_items_order_idx.
//
//	make bench-collection   (or: go run ./deploy/bench/collection -clips 100000 -items 5000)
//
// It needs the local stack (DATABASE_URL, REDIS_URL) and works in a
// database of its own, created and dropped here. Output lines starting
// with "Benchmark" are benchstat input.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/collections"
	"broll/deploy/bench/benchkit"
	"broll/tenancy"
)

func main() {
	clips := flag.Int("clips", 100_000, "clips in the catalog")
	items := flag.Int("items", collections.MaxItemsPerCollection, "clips in the collection")
	duration := flag.Duration("duration", 5*time.Second, "load time per target")
	conns := flag.Int("conns", 4, "concurrent client connections")
	flag.Parse()
	if *items > *clips || *items > collections.MaxItemsPerCollection {
		fmt.Fprintf(os.Stderr, "collection: -items must be at most -clips and %d\n", collections.MaxItemsPerCollection)
		os.Exit(2)
	}
	if err := run(*clips, *items, *duration, *conns); err != nil {
		fmt.Fprintln(os.Stderr, "collection:", err)
		os.Exit(1)
	}
}

func run(clips, items int, duration time.Duration, conns int) error {
	ctx := context.Background()
	sc, err := benchkit.OpenScratch(ctx, conns*2, false)
	if err != nil {
		return err
	}
	defer sc.Close()
	root, err := sc.Account(ctx)
	if err != nil {
		return err
	}
	node, g, err := sc.Node(ctx)
	if err != nil {
		return err
	}
	addr, stop, err := benchkit.Serve(node.App)
	if err != nil {
		return err
	}
	defer stop()

	start := time.Now()
	ids, err := seedCatalog(ctx, sc, clips)
	if err != nil {
		return err
	}
	fmt.Printf("catalog: %d clips in %s\n", clips, time.Since(start).Round(time.Millisecond))
	p := tenancy.Principal{KeyID: root.ID, AccountID: root.AccountID.UUID, RootKeyID: root.ID, Kind: tenancy.KindRoot, Scopes: root.Scopes}
	col, err := g.Collections.Create(ctx, p, collections.CreateRequest{Name: "bench"})
	if err != nil {
		return err
	}
	// The collection holds clips spread over the whole catalog, in an
	// order of their own.
	step := clips / items
	var picked []uuid.UUID
	for i := 0; i < items; i++ {
		picked = append(picked, ids[(i*step+i*7919)%clips])
	}
	start = time.Now()
	for len(picked) > 0 {
		n := min(len(picked), collections.MaxItemsPerAdd)
		if _, err := g.Collections.AddItems(ctx, p, col.ID, picked[:n]); err != nil {
			return err
		}
		picked = picked[n:]
	}
	fmt.Printf("collection: %d clips added in %s\n", items, time.Since(start).Round(time.Millisecond))
	if _, err := sc.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	if err := explain(ctx, sc, col.ID); err != nil {
		return err
	}

	auth := "Bearer " + root.Secret
	targets := []struct{ name, path string }{
		{"list_default", "/api/v1/broll"},
		{"collection_first_page", "/api/v1/collections/" + col.ID.String()},
		{"collection_first_page_50", "/api/v1/collections/" + col.ID.String() + "?limit=50"},
	}
	p50 := map[string]time.Duration{}
	for _, t := range targets {
		// A short unmeasured run first, so that each target is measured warm.
		load := func(d time.Duration) benchkit.Result {
			return benchkit.Drive(conns, d, func(int, int) *http.Request {
				req, _ := http.NewRequest(http.MethodGet, "http://"+addr+t.path, nil)
				req.Header.Set("Authorization", auth)
				return req
			})
		}
		load(time.Second)
		r := load(duration)
		if r.OK == 0 || r.Failed > 0 {
			return fmt.Errorf("%s: %d answered, %d failed", t.name, r.OK, r.Failed)
		}
		p50[t.name] = r.Percentile(0.5)
		fmt.Printf("%-26s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d conns, %s)\n", t.name, r.PerSecond(),
			benchkit.Millis(r.Percentile(0.5)), benchkit.Millis(r.Percentile(0.99)), conns, duration)
		fmt.Printf("BenchmarkRead/%s %d %d ns/op\n", t.name, r.OK, r.Percentile(0.5).Nanoseconds())
	}
	for _, n := range []string{"collection_first_page", "collection_first_page_50"} {
		ratio := float64(p50[n]) / float64(p50["list_default"])
		verdict := "within"
		if ratio > 2 {
			verdict = "NOT within"
		}
		fmt.Printf("%s p50 / list_default p50 = %.2f (%s the 2x goal)\n", n, ratio, verdict)
	}
	return nil
}

// seedCatalog writes n live clips straight into the catalog, with
// creation times a second apart, and returns their ids.
func seedCatalog(ctx context.Context, sc *benchkit.Scratch, n int) ([]uuid.UUID, error) {
	_, err := sc.Pool.Exec(ctx, `
		INSERT INTO videos (id, title, description, tags, emotion, gender, difficulty, media_key, created_at)
		SELECT gen_random_uuid(), 'Clip ' || i, 'A generated clip number ' || i, ARRAY['bench'],
		       (ARRAY['neutral','happy','playful','confident','surprised','confused','shocked','laughing','curious','amazed','excited','sad','angry'])[1 + i % 13],
		       (ARRAY['female','male','non_binary'])[1 + i % 3], (ARRAY['easy','medium','hard'])[1 + i % 3],
		       'clips/' || i || '/full.mp4', now() - make_interval(secs => $1 - i)
		FROM generate_series(1, $1) AS i`, n)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	rows, err := sc.Pool.Query(ctx, `SELECT id FROM videos ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// explain prints the plan of the items page's statement as the service
// sends it (its text is the collections package's; here, the same shape).
func explain(ctx context.Context, sc *benchkit.Scratch, id uuid.UUID) error {
	rows, err := sc.Pool.Query(ctx, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
		SELECT v.id, v.title, ci.position, ci.added_at
		FROM collection_items ci JOIN videos v ON v.id = ci.video_id
		WHERE ci.collection_id = $1 AND ci.position > 0 AND v.retired_at IS DISTINCT FROM 'infinity'::timestamptz
		ORDER BY ci.position LIMIT 21`, id)
	if err != nil {
		return err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	fmt.Println("items page plan:\n  " + strings.Join(lines, "\n  "))
	if !strings.Contains(strings.Join(lines, "\n"), "collection_items_order_idx") {
		return fmt.Errorf("the items page does not read collection_items_order_idx")
	}
	return nil
}
