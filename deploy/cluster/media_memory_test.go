package cluster

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/catalog/media"
	"broll/embed/embedtest"
	"broll/internal/testkit"
)

// TestDownloadMemoryFlat has 20 clients download a 50 MB file each at once
// from a real broll-api process, on both media stores. With local the
// bytes stream through the node from disk: its memory high-water mark
// (VmHWM) must not grow with what it sends. With s3 the node answers 302
// and the bytes come from the store: the node sends a few hundred bytes
// per download.
func TestDownloadMemoryFlat(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			downloadMemory(t, store)
		})
	}
}

const (
	memClients  = 20
	memFileSize = 50 << 20
)

func downloadMemory(t *testing.T, store string) {
	ctx := context.Background()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	env := sharedEnv(t, dbURL, rds, embedtest.NewOllama(t, embedtest.Options{}).URL)
	var files media.Store
	var err error
	if store == "s3" {
		s3 := testkit.StartS3(t)
		env = with(env, map[string]string{"BROLL_MEDIA_STORE": "s3", "BROLL_S3_ENDPOINT": s3.Endpoint,
			"BROLL_S3_BUCKET": s3.Bucket, "BROLL_S3_ACCESS_KEY": s3.AccessKey, "BROLL_S3_SECRET_KEY": s3.SecretKey})
		files, err = media.NewS3(ctx, media.S3Options{Endpoint: s3.Endpoint, Bucket: s3.Bucket, Region: s3.Region,
			AccessKey: s3.AccessKey, SecretKey: s3.SecretKey, PathStyle: true, PresignTTL: time.Minute})
	} else {
		files, err = media.NewLocal(env["BROLL_MEDIA_DIR"])
	}
	if err != nil {
		t.Fatal(err)
	}
	api := startAPI(t, env)

	// One 50 MB file that every clip names: the disk holds it once.
	const key = "clips/shared/full.mp4"
	if _, err := files.Put(ctx, key, io.LimitReader(zeros{}, memFileSize)); err != nil {
		t.Fatal(err)
	}
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100_000})
	buyer := acct.CustomerKey(t, pool, "downloader")
	videos := billingtest.Videos(t, pool, memClients, "easy")
	if _, err := pool.Exec(ctx, `UPDATE videos SET media_key = $1, media_content_type = 'video/mp4' WHERE id = ANY($2)`, key, videos); err != nil {
		t.Fatal(err)
	}
	r := call(t, api.url, "POST", "/api/v1/broll/purchase", buyer.Secret, map[string]any{"video_ids": videos})
	if r.status != 200 {
		t.Fatalf("purchase: %d %s", r.status, r.raw)
	}
	var links []string
	for _, p := range r.body["purchases"].([]any) {
		links = append(links, strings.Replace(p.(map[string]any)["download_url"].(string), "http://broll.test", api.url, 1))
	}

	// Through the API's own port: the redirect is followed only to the store.
	var fromAPI, fromStore atomic.Int64
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(link string) error {
		resp, err := client.Get(link)
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fromAPI.Add(n)
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusFound {
			resp, err = http.Get(resp.Header.Get("Location"))
			if err != nil {
				return err
			}
			n, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			fromStore.Add(n)
			return err
		}
		return nil
	}
	// A first download warms the node (buffers, pools) before the baseline.
	if err := fetch(links[0]); err != nil {
		t.Fatal(err)
	}
	fromAPI.Store(0)
	fromStore.Store(0)
	before := vmHWM(t, api.cmd.Process.Pid)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, memClients)
	for _, link := range links {
		wg.Go(func() {
			if err := fetch(link); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	took := time.Since(start)
	after := vmHWM(t, api.cmd.Process.Pid)
	t.Logf("%s: %d clients x %d MiB in %s; bytes from the API %d, from the store %d; API VmHWM %d KiB -> %d KiB (+%d KiB)",
		store, memClients, memFileSize>>20, took.Round(time.Millisecond), fromAPI.Load(), fromStore.Load(),
		before>>10, after>>10, (after-before)>>10)
	total := int64(memClients) * memFileSize
	switch store {
	case "local":
		if fromAPI.Load() != total {
			t.Fatalf("the API sent %d bytes, want %d", fromAPI.Load(), total)
		}
	case "s3":
		if fromStore.Load() != total || fromAPI.Load() > int64(memClients)*1024 {
			t.Fatalf("from the store %d bytes (want %d), from the API %d", fromStore.Load(), total, fromAPI.Load())
		}
	}
	// Flat: what 20 streams cost in buffers, nowhere near the 1000 MiB sent.
	if grown := after - before; grown > 32<<20 {
		t.Fatalf("API memory high-water mark grew by %d MiB while it served %d MiB", grown>>20, total>>20)
	}
	var logged int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM download_log`).Scan(&logged); err != nil || logged != memClients+1 {
		t.Fatalf("download log has %d fetches, want %d (%v)", logged, memClients+1, err)
	}
}
