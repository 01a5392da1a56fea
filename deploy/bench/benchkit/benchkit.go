// Package benchkit holds what the benchmark programs share: a scratch
// database on the local stack and a closed-loop HTTP load driver with
// latency percentiles.
package benchkit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"
)

// StackURLs returns DATABASE_URL and REDIS_URL, which must be set.
func StackURLs() (string, string, error) {
	db, rd := os.Getenv("DATABASE_URL"), os.Getenv("REDIS_URL")
	if db == "" || rd == "" {
		return "", "", fmt.Errorf("DATABASE_URL and REDIS_URL must be set (source .stack/env)")
	}
	return db, rd, nil
}

// ScratchDatabase creates an empty database next to admin's and returns its
// URL and a function that drops it.
func ScratchDatabase(ctx context.Context, admin string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("broll_bench_%d", time.Now().UnixNano()%1e9)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		_ = conn.Close(ctx) // the CREATE's error is the one to report
		return "", nil, err
	}
	cfg := conn.Config()
	url := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	return url, func() {
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = conn.Close(context.Background())
	}, nil
}

// Result is what a load run measured.
type Result struct {
	OK, Failed int64
	Elapsed    time.Duration
	Latencies  []time.Duration // of successful requests, sorted
}

// PerSecond is the rate of successful requests.
func (r Result) PerSecond() float64 { return float64(r.OK) / r.Elapsed.Seconds() }

// Percentile returns the p-th latency (0 < p <= 1).
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[int(float64(len(r.Latencies)-1)*p)]
}

// Millis renders a latency in milliseconds.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Drive runs `workers` closed loops for d; each loop builds its n-th request
// with next(worker, n). A 200 counts as success.
func Drive(workers int, d time.Duration, next func(worker, n int) *http.Request) Result {
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	return DriveFunc(workers, d, func(w, n int) error {
		res, err := client.Do(next(w, n))
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	})
}

// DriveFast is Drive over fasthttp's client (the HTTP library under the
// service's own server), which spends a fraction of net/http's CPU per
// request: on the 2-core benchmark machine the load generator shares the
// cores with the service, so a cheaper client leaves more of them to what
// is measured. next fills the worker's n-th request; a 200 counts as
// success.
func DriveFast(workers int, d time.Duration, next func(worker, n int, req *fasthttp.Request)) Result {
	client := &fasthttp.Client{MaxConnsPerHost: workers, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	return DriveFunc(workers, d, func(w, n int) error {
		req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(res)
		next(w, n, req)
		if err := client.Do(req, res); err != nil {
			return err
		}
		if res.StatusCode() != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode())
		}
		return nil
	})
}

// DriveFunc runs `workers` closed loops of call for d; a nil error counts
// as success.
func DriveFunc(workers int, d time.Duration, call func(worker, n int) error) Result {
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for n := 0; time.Now().Before(deadline); n++ {
				t0 := time.Now()
				if err := call(w, n); err != nil {
					failed.Add(1)
					continue
				}
				ok.Add(1)
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return Result{OK: ok.Load(), Failed: failed.Load(), Elapsed: time.Since(start), Latencies: lat}
}
