package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/api"
	"broll/billing/billingtest"
	"broll/billing/license"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/internal/config"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/worker"
)

// The licence travels with the file, end to end: an API node (purchases,
// downloads) and a worker (the stamps) over one database, Redis prefix and
// media store, as their binaries wire them.

// probeTags reads a file's container tags and its streams' codecs and
// packet counts with ffprobe.
func probeTags(t *testing.T, data []byte, ext string) (tags map[string]string, streams string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe"+ext)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-count_packets", "-print_format", "json",
		"-show_entries", "format_tags:stream=codec_name,nb_read_packets,width,height", p).Output()
	if err != nil {
		t.Fatalf("ffprobe cannot read the file: %v", err)
	}
	var doc struct {
		Format struct {
			Tags map[string]string `json:"tags"`
		} `json:"format"`
		Streams []map[string]any `json:"streams"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("ffprobe: %v %s", err, out)
	}
	s, _ := json.Marshal(doc.Streams)
	return doc.Format.Tags, string(s)
}

// stampEnv is an API node, a brollctl graph and the configuration a worker
// is opened with, over one test database, Redis prefix and media store.
type stampEnv struct {
	pool  *pgxpool.Pool
	cfg   config.Config
	app   *fiber.App
	ctl   *wiring.Services
	media media.Store
	s3    *testkit.S3Server
	// startWorker runs a worker over the env until the test ends.
	startWorker func(t *testing.T)
	// sweepEvery is the worker's StampSweepInterval: an hour unless a test
	// of the sweep sets it (a sweep would remake a pruned copy on its own).
	sweepEvery time.Duration
}

func newStampEnv(t *testing.T, s3 bool) *stampEnv {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix,
			"BROLL_MEDIA_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(),
			"BROLL_PUBLIC_URL": "http://api.test", "BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &stampEnv{pool: pool}
	if s3 {
		e.s3 = testkit.StartS3(t)
		cfg.MediaStore = "s3"
		cfg.S3 = config.S3{Endpoint: e.s3.Endpoint, Bucket: e.s3.Bucket, Region: e.s3.Region, PathStyle: true,
			AccessKey: config.Secret(e.s3.AccessKey), SecretKey: config.Secret(e.s3.SecretKey), PresignTTL: cfg.S3.PresignTTL}
	}
	e.cfg = cfg
	open := func(parts wiring.Parts) *wiring.Services {
		g, err := wiring.Open(context.Background(), cfg, wiring.Options{Parts: parts, Pool: pool, Redis: rds.Client})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		return g
	}
	e.ctl = open(wiring.CLIParts)
	g := open(wiring.APIParts)
	node, err := api.NewNode(g)
	if err != nil {
		t.Fatal(err)
	}
	e.app, e.media = node.App, g.Media
	e.startWorker = func(t *testing.T) {
		t.Helper()
		w, err := worker.New(workerDeps(open(wiring.WorkerParts)), worker.Options{PollInterval: 20 * time.Millisecond,
			RetryBaseDelay: 10 * time.Millisecond, RetryMaxDelay: 40 * time.Millisecond, ShutdownTimeout: 5 * time.Second,
			StampSweepInterval: cmp.Or(e.sweepEvery, time.Hour),
			Logger:             slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		})
	}
	return e
}

// do sends one request to the node with key as its bearer key ("" none).
func (e *stampEnv) do(t *testing.T, method, target, key string, body any) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(method, u.RequestURI(), rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, raw
}

// fetchMedia follows what the node answered for link: the body itself
// (local store) or, for a 302, the presigned URL the store serves (s3).
func (e *stampEnv) fetchMedia(t *testing.T, link string) (status int, body []byte, fromStore bool) {
	t.Helper()
	status, header, raw := e.do(t, "GET", link, "", nil)
	if status != http.StatusFound {
		return status, raw, false
	}
	loc := header.Get("Location")
	if e.s3 == nil || !strings.HasPrefix(loc, e.s3.Endpoint) {
		t.Fatalf("redirect to %q, not to the store", loc)
	}
	resp, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, body, true
}

// readStored reads the file under key from the media store.
func (e *stampEnv) readStored(t *testing.T, key string) ([]byte, error) {
	t.Helper()
	f, err := e.media.Open(context.Background(), key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func waitUntil(t *testing.T, within time.Duration, ok func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, why())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDeliveredFileCarriesItsLicence buys a real MP4 on both stores: before
// the worker ran the download serves the original; the worker's stamp is a
// remux (the same streams, packet for packet) stored beside the original
// whose comment names the licence and its verify URL, read back with
// ffprobe; the download then serves that copy. A copy lost from the store
// (or pruned) never fails a download: the original is served and the copy
// made again. A test key's purchase gets no stamp.
func TestDeliveredFileCarriesItsLicence(t *testing.T) {
	t.Parallel()
	file := testkit.RenderVideo(t, 320, 240, 2)
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			e := newStampEnv(t, store == "s3")
			ctx := context.Background()
			id := uuid.New()
			if _, err := e.ctl.Imports.ImportVideos(ctx, []imports.VideoInput{{ID: id.String(), Title: "Test pattern",
				Emotion: "neutral", Gender: "female", Difficulty: "easy", MediaFile: file}}, "", nil); err != nil {
				t.Fatal(err)
			}
			if err := e.ctl.MediaJobs.ProcessMedia(ctx, id); err != nil {
				t.Fatal(err)
			}
			acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
			buy := func(key string) (link, lic string, purchase uuid.UUID) {
				t.Helper()
				status, _, raw := e.do(t, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": []uuid.UUID{id}})
				var res struct {
					Purchases []struct {
						PurchaseID  uuid.UUID `json:"purchase_id"`
						DownloadURL string    `json:"download_url"`
						License     struct {
							ID        string `json:"id"`
							VerifyURL string `json:"verify_url"`
						} `json:"license"`
					} `json:"purchases"`
				}
				if err := json.Unmarshal(raw, &res); status != 200 || err != nil || len(res.Purchases) != 1 {
					t.Fatalf("purchase: %d %s", status, raw)
				}
				p := res.Purchases[0]
				return p.DownloadURL, p.License.ID, p.PurchaseID
			}
			link, lic, purchase := buy(acct.CustomerKey(t, e.pool, "buyer").Secret)
			if !license.ValidID(lic) {
				t.Fatalf("licence id %q", lic)
			}
			verify := "http://api.test/licenses/" + lic
			download := func() []byte {
				t.Helper()
				status, body, fromStore := e.fetchMedia(t, link)
				if status != 200 || fromStore != (store == "s3") {
					t.Fatalf("download: %d, from store %v", status, fromStore)
				}
				return body
			}
			stampKey := func() (key string) {
				_ = e.pool.QueryRow(ctx, `SELECT coalesce(media_key, '') FROM license_stamps WHERE purchase_id = $1`, purchase).Scan(&key)
				return key
			}

			// Before the stamp: the original, byte for byte.
			if got := download(); !bytes.Equal(got, original) {
				t.Fatalf("download before the stamp: %d bytes, not the original's %d", len(got), len(original))
			}
			_, originalStreams := probeTags(t, original, ".mp4")

			e.startWorker(t)
			waitUntil(t, 60*time.Second, func() bool { return stampKey() != "" },
				func() string { return "no stamped copy recorded" })
			key := stampKey()
			if want := "licensed/" + lic + "/full.mp4"; key != want {
				t.Fatalf("stamped copy under %q, want %q", key, want)
			}
			stored, err := e.readStored(t, key)
			if err != nil {
				t.Fatal(err)
			}
			checkStamped := func(what string, data []byte) {
				t.Helper()
				tags, streams := probeTags(t, data, ".mp4")
				if c := tags["comment"]; !strings.Contains(c, lic) || !strings.Contains(c, verify) {
					t.Fatalf("%s: comment %q lacks the licence %s or %s (tags %v)", what, c, lic, verify, tags)
				}
				if streams != originalStreams {
					t.Fatalf("%s: streams %s, the original's %s: not a remux", what, streams, originalStreams)
				}
			}
			checkStamped("stored copy", stored)
			var size int64
			if err := e.pool.QueryRow(ctx, `SELECT bytes FROM license_stamps WHERE purchase_id = $1`, purchase).Scan(&size); err != nil || size != int64(len(stored)) {
				t.Fatalf("recorded size %d, stored %d (%v)", size, len(stored), err)
			}
			checkStamped("download", download())

			// A copy lost from the store: the original, and the copy again.
			remover := e.media.(media.Remover)
			if err := remover.Remove(ctx, key); err != nil {
				t.Fatal(err)
			}
			if got := download(); !bytes.Equal(got, original) {
				t.Fatalf("download with the copy lost: %d bytes, not the original", len(got))
			}
			waitUntil(t, 60*time.Second, func() bool { _, err := e.media.Stat(ctx, key); return err == nil },
				func() string { return "the lost copy was not made again" })
			checkStamped("download of the remade copy", download())

			// Pruned: removed with its record; the next download serves the
			// original and asks for it again.
			pruned, err := e.ctl.Stamps.PruneStamped(ctx, time.Now().Add(time.Hour))
			if err != nil || pruned.Removed != 1 || pruned.Bytes != size {
				t.Fatalf("prune = %+v, %v; want 1 copy of %d bytes", pruned, err, size)
			}
			if _, err := e.media.Stat(ctx, key); err == nil || stampKey() != "" {
				t.Fatalf("pruned copy still there (%v) or recorded (%q)", err, stampKey())
			}
			if got := download(); !bytes.Equal(got, original) {
				t.Fatalf("download after the prune: %d bytes, not the original", len(got))
			}
			waitUntil(t, 60*time.Second, func() bool { return stampKey() != "" },
				func() string { return "the pruned copy was not made again on demand" })
			checkStamped("download after the copy was remade", download())

			// A test key's purchase serves the preview and is never stamped.
			testLink, _, testPurchase := buy(acct.TestKey(t, e.pool, "sandbox").Secret)
			if status, _, _ := e.fetchMedia(t, testLink); status != 200 {
				t.Fatalf("test download: %d", status)
			}
			if out, err := e.ctl.Stamps.Stamp(ctx, testPurchase); err != nil || out != license.StampNotNeeded {
				t.Fatalf("stamp of a test purchase = %q, %v", out, err)
			}
			var n int
			if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM license_stamps WHERE purchase_id = $1`, testPurchase).Scan(&n); err != nil || n != 0 {
				t.Fatalf("a test purchase was stamped: %d, %v", n, err)
			}
		})
	}
}
