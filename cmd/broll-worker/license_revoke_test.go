package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/billing/license"
	"broll/catalog/imports"
	"broll/internal/apperr"
	"broll/internal/testkit"
	"broll/wiring"
)

// importClip imports and processes a real MP4 clip in e's catalog.
func (e *stampEnv) importClip(t *testing.T, file string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	id := uuid.New()
	if _, err := e.ctl.Imports.ImportVideos(ctx, []imports.VideoInput{{ID: id.String(), Title: "Test pattern",
		Emotion: "neutral", Gender: "female", Difficulty: "easy", MediaFile: file}}, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.ctl.MediaJobs.ProcessMedia(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

// stampOf is purchase's recorded stamped copy ("" none).
func (e *stampEnv) stampOf(t *testing.T, purchase uuid.UUID) (key string) {
	t.Helper()
	_ = e.pool.QueryRow(context.Background(), `SELECT coalesce(media_key, '') FROM license_stamps WHERE purchase_id = $1`, purchase).Scan(&key)
	return key
}

// purchaseRecord is a purchase record as far as these tests read it.
type purchaseRecord struct {
	PurchaseID      uuid.UUID `json:"purchase_id"`
	DownloadURL     *string   `json:"download_url"`
	DownloadRevoked bool      `json:"download_revoked"`
	License         struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"license"`
}

// A revoked licence's purchase is no longer delivered, on both stores: its
// signed link answers 403 license_revoked, no fresh link is given for it
// (purchase records and the answer to buying it again), and its stamped
// copy is removed from the media store, file and record. A stamp asked for
// after the revocation makes no copy.
func TestRevokedLicenceIsNoLongerDelivered(t *testing.T) {
	t.Parallel()
	file := testkit.RenderVideo(t, 320, 240, 2)
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			e := newStampEnv(t, store == "s3")
			ctx := context.Background()
			clip := e.importClip(t, file)
			acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
			key := acct.CustomerKey(t, e.pool, "buyer").Secret
			buy := func() purchaseRecord {
				t.Helper()
				status, _, raw := e.do(t, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": []uuid.UUID{clip}})
				var res struct {
					Purchases []purchaseRecord `json:"purchases"`
				}
				if err := json.Unmarshal(raw, &res); status != 200 || err != nil || len(res.Purchases) != 1 {
					t.Fatalf("purchase: %d %s", status, raw)
				}
				return res.Purchases[0]
			}
			bought := buy()
			link, lic := *bought.DownloadURL, bought.License.ID
			e.startWorker(t)
			waitUntil(t, 60*time.Second, func() bool { return e.stampOf(t, bought.PurchaseID) != "" },
				func() string { return "no stamped copy recorded" })
			stamped := e.stampOf(t, bought.PurchaseID)
			if _, err := e.media.Stat(ctx, stamped); err != nil {
				t.Fatalf("the stamped copy is not in the store: %v", err)
			}
			if status, _, _ := e.fetchMedia(t, link); status != 200 {
				t.Fatalf("download before the revocation: %d", status)
			}

			if _, err := e.ctl.Licenses.Revoke(ctx, lic, "redistributed on a stock site"); err != nil {
				t.Fatal(err)
			}

			status, header, raw := e.do(t, "GET", link, "", nil)
			var problem struct {
				Code   string `json:"code"`
				Status int    `json:"status"`
			}
			_ = json.Unmarshal(raw, &problem)
			if status != http.StatusForbidden || problem.Code != "license_revoked" || problem.Status != 403 ||
				header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("the link after the revocation: %d %s %.200q", status, header.Get("Content-Type"), raw)
			}
			if status, _, _ := e.do(t, "HEAD", link, "", nil); status != http.StatusForbidden {
				t.Errorf("HEAD of the link after the revocation: %d", status)
			}
			if _, err := e.media.Stat(ctx, stamped); apperr.CodeOf(err) != apperr.NotFound {
				t.Errorf("the stamped copy %s is still in the store (%v)", stamped, err)
			}
			if k := e.stampOf(t, bought.PurchaseID); k != "" {
				t.Errorf("the removed copy is still recorded: %q", k)
			}

			// No fresh link: the records and buying again say why instead.
			_, _, raw = e.do(t, "GET", "/api/v1/broll/purchases", key, nil)
			var list struct {
				Purchases []purchaseRecord `json:"purchases"`
			}
			if err := json.Unmarshal(raw, &list); err != nil || len(list.Purchases) != 1 {
				t.Fatalf("records: %s", raw)
			}
			if r := list.Purchases[0]; r.DownloadURL != nil || !r.DownloadRevoked || r.License.Status != "revoked" {
				t.Errorf("the record of a revoked licence: download_url %v, download_revoked %v, licence %+v",
					r.DownloadURL, r.DownloadRevoked, r.License)
			}
			if again := buy(); again.DownloadURL != nil || again.License.Status != "revoked" {
				t.Errorf("buying it again: download_url %v, licence %+v", again.DownloadURL, again.License)
			}

			// The clip, read alone or in a list, is owned and has no link.
			var clipJSON struct {
				ID          uuid.UUID `json:"id"`
				Owned       bool      `json:"owned"`
				DownloadURL *string   `json:"download_url"`
			}
			status, _, raw = e.do(t, "GET", "/api/v1/broll/"+clip.String(), key, nil)
			if err := json.Unmarshal(raw, &clipJSON); err != nil || status != 200 || !clipJSON.Owned || clipJSON.DownloadURL != nil {
				t.Errorf("the clip after the revocation: %d %s", status, raw)
			}
			status, _, raw = e.do(t, "GET", "/api/v1/broll?owned=true", key, nil)
			var clips struct {
				Videos []json.RawMessage `json:"videos"`
			}
			if err := json.Unmarshal(raw, &clips); err != nil || status != 200 || len(clips.Videos) != 1 ||
				json.Unmarshal(clips.Videos[0], &clipJSON) != nil || clipJSON.ID != clip || !clipJSON.Owned || clipJSON.DownloadURL != nil {
				t.Errorf("the clip listed after the revocation: %d %s", status, raw)
			}

			// A stamp asked for since (a download or a sweep that raced the
			// revocation) makes no copy.
			if out, err := e.ctl.Stamps.Stamp(ctx, bought.PurchaseID); err != nil || out == license.Stamped {
				t.Errorf("stamp after the revocation = %q, %v", out, err)
			}
			if _, err := e.media.Stat(ctx, stamped); apperr.CodeOf(err) != apperr.NotFound || e.stampOf(t, bought.PurchaseID) != "" {
				t.Errorf("a copy was made after the revocation (%v)", err)
			}
		})
	}
}

// A purchase whose stamp request was lost (made on a node whose Redis was
// away: nothing was queued) while the worker runs is stamped by the
// worker's periodic sweep, with no download asking for it.
func TestSweepStampsPurchasesWhoseRequestWasLost(t *testing.T) {
	t.Parallel()
	e := newStampEnv(t, false)
	ctx := context.Background()
	clip := e.importClip(t, testkit.RenderVideo(t, 320, 240, 1))
	// A node without Redis: its purchases commit, their stamp requests go
	// nowhere.
	away, err := wiring.Open(ctx, e.cfg, wiring.Options{Parts: wiring.Media, Pool: e.pool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(away.Close)
	e.sweepEvery = 200 * time.Millisecond
	e.startWorker(t)
	time.Sleep(500 * time.Millisecond) // past the sweep that runs as the worker starts

	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	buyer := billingtest.Principal(acct, acct.CustomerKey(t, e.pool, "buyer"))
	res, err := away.Billing.Purchase(ctx, buyer, billing.PurchaseRequest{VideoIDs: []uuid.UUID{clip}})
	if err != nil || len(res.Purchases) != 1 {
		t.Fatalf("purchase: %+v, %v", res, err)
	}
	purchase := res.Purchases[0].PurchaseID
	waitUntil(t, 30*time.Second, func() bool { return e.stampOf(t, purchase) != "" },
		func() string { return "the sweep did not stamp the purchase whose request was lost" })
	if _, err := e.media.Stat(ctx, e.stampOf(t, purchase)); err != nil {
		t.Fatalf("the swept stamp is not in the store: %v", err)
	}
	var downloads int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM download_log WHERE purchase_id = $1`, purchase).Scan(&downloads); err != nil || downloads != 0 {
		t.Fatalf("downloads of the purchase: %d (%v)", downloads, err)
	}
}
