// Command purchase drives purchases over HTTP from many customer keys of ONE
// account (so every purchase contends for the same credit-pool row) and
// reports purchases/s with p50/p99 latency. In the same run it measures the
// plain Postgres ceiling for updating one row from as many clients (pgbench
// with a one-line UPDATE), right before and right after the purchases over
// HTTP, and compares them with the mean of the two: on a shared machine the
// ceiling moves by a tenth from one minute to the next, and two readings
// around the run follow the machine through it. It checks the money
// invariants after each run.
//
//	make bench-purchase   (or: go run ./deploy/bench/purchase -duration 10s -clients 64)
//
// -spend-limits gives every customer key a monthly spend limit (one no
// run reaches), so that every purchase pays for the limit check; run it
// back to back with a run without to compare.
//
// It needs the local stack (DATABASE_URL, REDIS_URL) and works in a database
// of its own, created and dropped here.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fasthttp"

	"broll/billing"
	"broll/deploy/bench/benchkit"
	"broll/internal/database"
	"broll/internal/money"
	"broll/tenancy"
)

func main() {
	duration := flag.Duration("duration", 10*time.Second, "how long each measurement runs")
	clients := flag.Int("clients", 64, "concurrent clients, one customer key each")
	limits := flag.Bool("spend-limits", false, "give every customer key a monthly spend limit (never reached)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the HTTP measurement to this file")
	client := flag.String("client", "fasthttp", "the load generator's HTTP client: fasthttp, or net/http (the one before 2026-11-29)")
	flag.Parse()
	if *client != "fasthttp" && *client != "net/http" {
		fmt.Fprintln(os.Stderr, "purchase: -client is fasthttp or net/http")
		os.Exit(2)
	}
	if err := run(*duration, *clients, *limits, *cpuProfile, *client); err != nil {
		fmt.Fprintln(os.Stderr, "purchase:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, clients int, limits bool, cpuProfile, client string) error {
	ctx := context.Background()
	sc, err := benchkit.OpenScratch(ctx, 0, false)
	if err != nil {
		return err
	}
	defer sc.Close()
	pool, dbURL := sc.Pool, sc.URL
	node, g, err := sc.Node(ctx)
	if err != nil {
		return err
	}

	// One account, one shared pool, many customer keys, plenty of clips so
	// that every purchase is a new, charged one.
	bill := g.Billing
	opened, err := bill.OpenAccount(ctx, "Bench", "bench", money.MaxCents)
	if err != nil {
		return err
	}
	// pgbench updates a row of its own in the same table (an account
	// nobody buys with), so that the purchases' account keeps its ledger
	// exact while the ceiling is read before and after them.
	ceilingAccount, err := bill.OpenAccount(ctx, "Ceiling", "bench-ceiling", money.MaxCents)
	if err != nil {
		return err
	}
	root := tenancy.Principal{KeyID: opened.RootKey.ID, AccountID: opened.Account.ID, RootKeyID: opened.RootKey.ID,
		Kind: tenancy.KindRoot, Scopes: tenancy.RootScopes()}
	ten := g.Tenancy
	keys := make([]string, clients)
	principals := make([]tenancy.Principal, clients)
	for i := range keys {
		spec := tenancy.CustomerKeySpec{Label: fmt.Sprintf("customer %d", i)}
		if limits {
			spec.SpendLimit = &tenancy.SpendLimit{Amount: money.MaxCents / money.Cents(clients), Period: tenancy.SpendMonth}
		}
		k, err := ten.CreateCustomerKeyWith(ctx, root, spec)
		if err != nil {
			return err
		}
		keys[i] = k.Secret
		principals[i] = tenancy.Principal{KeyID: k.ID, AccountID: opened.Account.ID, RootKeyID: root.KeyID,
			Kind: tenancy.KindCustomer, Scopes: k.Scopes}
	}
	const clips = 20000
	if _, err := pool.Exec(ctx, `
		INSERT INTO videos (title, emotion, gender, difficulty, media_key)
		SELECT 'Bench clip ' || g, 'happy', 'female', 'easy', 'clips/bench/' || g FROM generate_series(1, $1) g`, clips); err != nil {
		return err
	}
	videoIDs, err := database.Select(ctx, pool, pgx.RowTo[uuid.UUID], `SELECT id FROM videos`)
	if err != nil {
		return err
	}

	if err := seedHistory(ctx, bill, ten, videoIDs); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		return err
	}

	addr, stop, err := benchkit.Serve(node.App)
	if err != nil {
		return err
	}
	defer stop()

	// Where a purchase's time goes: the batch statement's own time comes
	// from Postgres's function statistics, collected for this database.
	if _, err := pool.Exec(ctx, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET track_functions = ''pl''', current_database()); END $$`); err != nil {
		return err
	}
	pool.Reset()

	fmt.Printf("purchase benchmark: %d clients (one customer key each, one shared pool, %s), %s per measurement, spend limits %v\n",
		clients, client, duration, limits)
	before, err := measureCeiling(ctx, pool, dbURL, ceilingAccount.Account.ID, clients, duration, "before")
	if err != nil {
		return err
	}
	stopProfile, err := benchkit.CPUProfile(cpuProfile)
	if err != nil {
		return err
	}
	meter := benchkit.CPUMeter{Pool: pool, Redis: sc.Redis}
	start := meter.Sample(ctx)
	res := drive(client, "http://"+addr+"/api/v1/broll/purchase", keys, videoIDs, duration)
	spent := meter.Sample(ctx).Sub(start)
	stopProfile()
	report("POST /api/v1/broll/purchase (HTTP, full path)", res, spent)
	after, err := measureCeiling(ctx, pool, dbURL, ceilingAccount.Account.ID, clients, duration, "after")
	if err != nil {
		return err
	}
	if err := profile(ctx, pool, opened.Account.ID, res.OK, res.Elapsed); err != nil {
		return err
	}
	if err := checkInvariants(ctx, pool, opened.Account.ID); err != nil {
		return err
	}
	ceiling := (before + after) / 2
	fmt.Printf("ratio purchases/ceiling: %.2f (the ceiling's mean, %.0f updates/s; %.2f against the reading before, %.2f after)\n",
		res.PerSecond()/ceiling, ceiling, res.PerSecond()/before, res.PerSecond()/after)

	// The same purchases without HTTP: billing.Service.Purchase called from
	// as many goroutines, so the difference is what HTTP, auth and the
	// rate limiter cost.
	start = meter.Sample(ctx)
	direct := driveService(bill, principals, videoIDs, duration)
	report("billing.Service.Purchase (no HTTP)", direct, meter.Sample(ctx).Sub(start))
	return checkInvariants(ctx, pool, opened.Account.ID)
}

// measureCeiling runs pgbench on account's row and prints its rate. The
// dead row versions its updates leave are vacuumed away afterwards, so
// that they do not slow the purchases' own account row, which may share a
// page with it.
func measureCeiling(ctx context.Context, pool *pgxpool.Pool, dbURL string, account uuid.UUID, clients int, d time.Duration, when string) (float64, error) {
	ceiling, err := pgbenchCeiling(dbURL, account, clients, d)
	if err != nil {
		return 0, fmt.Errorf("pgbench: %w", err)
	}
	fmt.Printf("%-46s %8.0f updates/s\n", "pgbench: UPDATE of one account row, "+when, ceiling)
	if _, err := pool.Exec(ctx, `VACUUM accounts`); err != nil {
		return 0, err
	}
	return ceiling, nil
}

// report prints a measurement's rate and latency, and the CPU time one
// purchase cost this process (server and load generator), Redis and the
// benchmark database's Postgres backends: on a shared machine the CPU per
// purchase moves much less than purchases/s do.
func report(name string, r benchkit.Result, cpu benchkit.CPUSample) {
	n := float64(max(r.OK+r.Failed, 1))
	fmt.Printf("%-46s %8.0f purchases/s  p50 %6.2f ms  p99 %6.2f ms  (%d ok, %d failed)\n",
		name, r.PerSecond(), benchkit.Millis(r.Percentile(0.5)), benchkit.Millis(r.Percentile(0.99)), r.OK, r.Failed)
	fmt.Printf("%-46s %8.0f µs CPU per purchase: %.0f here, %.0f Redis, %.0f Postgres\n", "",
		float64(cpu.Total().Microseconds())/n, float64(cpu.Self.Microseconds())/n,
		float64(cpu.Redis.Microseconds())/n, float64(cpu.Postgres.Microseconds())/n)
}

// historyKeys and historyPerKey size the purchases another account makes
// before anything is measured.
const historyKeys, historyPerKey = 8, 2500

// seedHistory puts the database in the state a service's is in: purchases
// on record (another account's, through the real purchase path) and
// statistics on every table, as autovacuum keeps them. A database that was
// never analyzed leaves the planner to pick between two indexes at equal
// cost for a buyer's ownership lookup, and the batch statement's plan,
// made once per connection, may then keep walking each key's whole
// history by purchased_at until the first ANALYZE.
func seedHistory(ctx context.Context, bill *billing.Service, ten *tenancy.Service, videos []uuid.UUID) error {
	opened, err := bill.OpenAccount(ctx, "History", "bench-history", money.MaxCents)
	if err != nil {
		return err
	}
	root := tenancy.Principal{KeyID: opened.RootKey.ID, AccountID: opened.Account.ID, RootKeyID: opened.RootKey.ID,
		Kind: tenancy.KindRoot, Scopes: tenancy.RootScopes()}
	errs := make(chan error, historyKeys)
	for i := range historyKeys {
		k, err := ten.CreateCustomerKeyWith(ctx, root, tenancy.CustomerKeySpec{Label: fmt.Sprintf("history %d", i)})
		if err != nil {
			return err
		}
		buyer := tenancy.Principal{KeyID: k.ID, AccountID: opened.Account.ID, RootKeyID: root.KeyID,
			Kind: tenancy.KindCustomer, Scopes: k.Scopes}
		go func() {
			for start := 0; start < historyPerKey; start += billing.MaxVideosPerPurchase {
				ids := make([]uuid.UUID, 0, billing.MaxVideosPerPurchase)
				for j := start; j < min(start+billing.MaxVideosPerPurchase, historyPerKey); j++ {
					ids = append(ids, videos[(i*historyPerKey+j)%len(videos)])
				}
				if _, err := bill.Purchase(ctx, buyer, billing.PurchaseRequest{VideoIDs: ids}); err != nil {
					errs <- fmt.Errorf("history: %w", err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range historyKeys {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// drive runs one client per key; each buys clips in its own order so that
// nearly every request is a new charge on the shared pool. client picks
// the load generator's HTTP client (benchkit.DriveFast or benchkit.Drive).
func drive(client, url string, keys []string, videos []uuid.UUID, d time.Duration) benchkit.Result {
	body := func(w, n int) []byte {
		v := videos[(w*7919+n)%len(videos)]
		return []byte(`{"video_ids":["` + v.String() + `"]}`)
	}
	if client == "net/http" {
		return benchkit.Drive(len(keys), d, func(w, n int) *http.Request {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body(w, n)))
			req.Header.Set("Authorization", "Bearer "+keys[w])
			req.Header.Set("Content-Type", "application/json")
			return req
		})
	}
	return benchkit.DriveFast(len(keys), d, func(w, n int, req *fasthttp.Request) {
		req.SetRequestURI(url)
		req.Header.SetMethod("POST")
		req.Header.Set("Authorization", "Bearer "+keys[w])
		req.Header.SetContentType("application/json")
		req.SetBody(body(w, n))
	})
}

// driveService is drive without HTTP; its clients buy from the other end
// of their sequence so that every purchase is still a new one.
func driveService(bill *billing.Service, keys []tenancy.Principal, videos []uuid.UUID, d time.Duration) benchkit.Result {
	return benchkit.DriveFunc(len(keys), d, func(w, n int) error {
		v := videos[(w*7919+len(videos)/2+n)%len(videos)]
		_, err := bill.Purchase(context.Background(), keys[w], billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}})
		return err
	})
}

// profile splits a purchase's time: how many batches carried the run's
// purchases (one transaction each, so one purchased_at each), and how long
// Postgres spent in the batch statement (pg_stat_user_functions; closing
// the connections makes their backends report it).
func profile(ctx context.Context, pool *pgxpool.Pool, account uuid.UUID, purchases int64, elapsed time.Duration) error {
	pool.Reset()
	var batches, calls int64
	var total float64
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT purchased_at) FROM purchases WHERE account_id = $1`, account).
		Scan(&batches); err != nil {
		return err
	}
	if err := pool.QueryRow(ctx, `
		SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) FROM pg_stat_user_functions
		WHERE funcname = 'broll_purchase_batch'`).Scan(&calls, &total); err != nil {
		return err
	}
	if batches == 0 || calls == 0 || purchases == 0 {
		return fmt.Errorf("profile: no batches recorded")
	}
	fmt.Printf("profile: %d batches, %.1f purchases per batch; the batch statement took %.2f ms per batch (%.0f µs per purchase), "+
		"waits for the account row included; summed, %.0f%% of the run's wall time (a node's second batch waits while the first runs)\n",
		batches, float64(purchases)/float64(batches), total/float64(calls), total*1000/float64(purchases),
		100*total/float64(elapsed.Milliseconds()))
	return nil
}

var tpsRe = regexp.MustCompile(`tps = ([0-9.]+)`)

// pgbenchCeiling: how many single-row UPDATEs of the account row per second
// Postgres commits from the same number of clients. A purchase must take
// that row's lock once, so this is the ceiling of an unstriped pool.
func pgbenchCeiling(dbURL string, account uuid.UUID, clients int, d time.Duration) (float64, error) {
	bin := "pgbench"
	if matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench"); len(matches) > 0 {
		sort.Strings(matches)
		bin = matches[len(matches)-1]
	}
	script, err := os.CreateTemp("", "broll-pgbench-*.sql")
	if err != nil {
		return 0, err
	}
	defer os.Remove(script.Name())
	fmt.Fprintf(script, "UPDATE accounts SET balance_cents = balance_cents - 1 WHERE id = '%s';\n", account)
	// A script that did not reach the disk whole would measure something else.
	if err := script.Close(); err != nil {
		return 0, err
	}
	out, err := exec.Command(bin, "-n", "-c", fmt.Sprint(clients), "-j", "2", "-T", fmt.Sprint(int(d.Seconds())),
		"-f", script.Name(), dbURL).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	m := tpsRe.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no tps in pgbench output")
	}
	var tps float64
	_, err = fmt.Sscanf(string(m[1]), "%f", &tps)
	return tps, err
}

// checkInvariants: the pool never went negative, equals its ledger, and
// every purchase was charged exactly once.
func checkInvariants(ctx context.Context, pool *pgxpool.Pool, account uuid.UUID) error {
	var balance, ledger, purchases, purchaseCents, charges int64
	err := pool.QueryRow(ctx, `
		SELECT a.balance_cents,
		       (SELECT sum(amount_cents) FROM ledger WHERE account_id = a.id),
		       (SELECT count(*) FROM purchases WHERE account_id = a.id),
		       (SELECT coalesce(sum(price_cents), 0) FROM purchases WHERE account_id = a.id),
		       (SELECT coalesce(-sum(amount_cents), 0) FROM ledger WHERE account_id = a.id AND kind = 'purchase')
		FROM accounts a WHERE a.id = $1`, account).Scan(&balance, &ledger, &purchases, &purchaseCents, &charges)
	if err != nil {
		return err
	}
	fmt.Printf("invariants: %d purchases, balance %s = ledger %s, charges %s = purchase prices %s: ",
		purchases, money.Cents(balance), money.Cents(ledger), money.Cents(charges), money.Cents(purchaseCents))
	if balance < 0 || balance != ledger || charges != purchaseCents {
		fmt.Println("BROKEN")
		return fmt.Errorf("money invariants broken")
	}
	fmt.Println("hold")
	return nil
}
