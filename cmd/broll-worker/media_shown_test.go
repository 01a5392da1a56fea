package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/catalog/imports"
)

// ffmpegTo runs ffmpeg (installed by deploy/local/stack.sh) writing out.
func ffmpegTo(t *testing.T, out string, args ...string) string {
	t.Helper()
	cmd := exec.Command("ffmpeg", append(append([]string{"-v", "error", "-y"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	return out
}

// shownSize is the size of the first frame ffmpeg decodes from data, as a
// player shows it (turned by the display matrix), and the rotation
// ffprobe reads from the display matrix ("" none).
func shownSize(t *testing.T, data []byte, ext string) (size, rotation string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shown"+ext)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "info", "-i", p, "-frames:v", "1",
		"-vf", "showinfo", "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	_, after, ok := strings.Cut(string(out), "Parsed_showinfo")
	_, after, ok2 := strings.Cut(after, " s:")
	if !ok || !ok2 {
		t.Fatalf("no frame decoded: %s", out)
	}
	size, _, _ = strings.Cut(after, " ")
	rot, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
		"stream_side_data=rotation", "-of", "csv=p=0", p).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	return size, strings.TrimSpace(string(rot))
}

// A clip as phones record it upright (640x360 pixels with a quarter-turn
// display matrix) and a file an uploader tool appended 3 KB of text to,
// imported as content ops import them and probed by the worker: the
// phone's clip is listed 360x640 and vertical, its preview and thumbnail
// are upright and its licensed copy keeps the matrix; the file with
// trailing bytes is listed and sold.
func TestClipsAreListedAsPlayersShowThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pixels := ffmpegTo(t, filepath.Join(dir, "pixels.mp4"), "-f", "lavfi", "-i", "testsrc=size=640x360:rate=10:duration=2",
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "40", "-pix_fmt", "yuv420p")
	phone := ffmpegTo(t, filepath.Join(dir, "phone.mp4"), "-i", pixels, "-c", "copy", "-metadata:s:v:0", "rotate=90")
	plain := ffmpegTo(t, filepath.Join(dir, "plain.mp4"), "-f", "lavfi", "-i", "testsrc=size=320x180:rate=10:duration=2",
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "40", "-pix_fmt", "yuv420p", "-movflags", "+faststart")
	body, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	trailing := filepath.Join(dir, "trailing.mp4")
	junk := bytes.Repeat([]byte("uploaded with tool 1.2; "), 128)[:3072]
	if err := os.WriteFile(trailing, append(body, junk...), 0o644); err != nil {
		t.Fatal(err)
	}

	e := newStampEnv(t, false)
	ctx := context.Background()
	phoneID, trailingID := uuid.New(), uuid.New()
	if _, err := e.ctl.Imports.ImportVideos(ctx, []imports.VideoInput{
		{ID: phoneID.String(), Title: "Selfie upright", Emotion: "happy", Gender: "female", Difficulty: "easy", MediaFile: phone},
		{ID: trailingID.String(), Title: "Tool upload", Emotion: "neutral", Gender: "male", Difficulty: "easy", MediaFile: trailing},
	}, "", nil); err != nil {
		t.Fatal(err)
	}
	e.startWorker(t)
	mediaStatus := func(id uuid.UUID) (status string) {
		var reason string
		_ = e.pool.QueryRow(ctx, `SELECT media_status || ' ' || coalesce(media_error, '') FROM videos WHERE id = $1`, id).Scan(&reason)
		return reason
	}
	for _, id := range []uuid.UUID{phoneID, trailingID} {
		waitUntil(t, 60*time.Second, func() bool { return !strings.HasPrefix(mediaStatus(id), "pending") },
			func() string { return "clip " + id.String() + ": " + mediaStatus(id) })
	}
	if got := mediaStatus(trailingID); got != "ready " {
		t.Fatalf("the file with trailing bytes: %s, want ready", got)
	}

	key := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000}).CustomerKey(t, e.pool, "buyer").Secret
	type listed struct {
		ID          uuid.UUID `json:"id"`
		Orientation *string   `json:"orientation"`
		Width       *int      `json:"width"`
		Height      *int      `json:"height"`
	}
	list := func(orientation string) map[uuid.UUID]listed {
		t.Helper()
		status, _, raw := e.do(t, "GET", "/api/v1/broll?orientation="+orientation, key, nil)
		var page struct {
			Videos []listed `json:"videos"`
		}
		if err := json.Unmarshal(raw, &page); status != http.StatusOK || err != nil {
			t.Fatalf("list %s: %d %s", orientation, status, raw)
		}
		out := map[uuid.UUID]listed{}
		for _, v := range page.Videos {
			out[v.ID] = v
		}
		return out
	}
	shows := func(v listed, width, height int, orientation string) bool {
		return v.Width != nil && v.Height != nil && v.Orientation != nil &&
			*v.Width == width && *v.Height == height && *v.Orientation == orientation
	}
	vertical, horizontal := list("vertical"), list("horizontal")
	if v, ok := vertical[phoneID]; !ok || !shows(v, 360, 640, "vertical") {
		t.Fatalf("the phone's clip among vertical clips: %v %+v; want 360x640 vertical", ok, v)
	}
	if _, ok := horizontal[phoneID]; ok {
		t.Fatal("the phone's clip is listed horizontal")
	}
	if v, ok := horizontal[trailingID]; !ok || !shows(v, 320, 180, "horizontal") {
		t.Fatalf("the file with trailing bytes among horizontal clips: %v %+v; want 320x180", ok, v)
	}
	status, _, raw := e.do(t, "GET", "/api/v1/broll/"+phoneID.String(), key, nil)
	var details listed
	if err := json.Unmarshal(raw, &details); status != http.StatusOK || err != nil || !shows(details, 360, 640, "vertical") {
		t.Fatalf("the phone's clip's details: %d %s; want 360x640 vertical", status, raw)
	}

	// Preview and thumbnail: made upright (ffmpeg turns the frames), with
	// no matrix left to turn them again.
	var previewKey, thumbKey string
	waitUntil(t, 60*time.Second, func() bool {
		_ = e.pool.QueryRow(ctx, `SELECT coalesce(preview_key, ''), coalesce(thumbnail_key, '') FROM videos WHERE id = $1`,
			phoneID).Scan(&previewKey, &thumbKey)
		return previewKey != "" && thumbKey != ""
	}, func() string { return "no preview and thumbnail made" })
	for _, f := range []struct{ key, ext, size string }{{previewKey, ".mp4", "270x480"}, {thumbKey, ".jpg", "270x480"}} {
		data, err := e.readStored(t, f.key)
		if err != nil {
			t.Fatal(err)
		}
		if size, rot := shownSize(t, data, f.ext); size != f.size || rot != "" {
			t.Fatalf("%s shows %s with rotation %q; want %s, upright pixels", f.key, size, rot, f.size)
		}
	}

	// Both are sold; the phone's licensed copy keeps its display matrix.
	status, _, raw = e.do(t, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": []uuid.UUID{phoneID, trailingID}})
	var bought struct {
		Purchases []struct {
			PurchaseID uuid.UUID `json:"purchase_id"`
			VideoID    uuid.UUID `json:"video_id"`
		} `json:"purchases"`
	}
	if err := json.Unmarshal(raw, &bought); status != http.StatusOK || err != nil || len(bought.Purchases) != 2 {
		t.Fatalf("purchase of both: %d %s", status, raw)
	}
	var phonePurchase uuid.UUID
	for _, p := range bought.Purchases {
		if p.VideoID == phoneID {
			phonePurchase = p.PurchaseID
		}
	}
	var stamped string
	waitUntil(t, 60*time.Second, func() bool {
		_ = e.pool.QueryRow(ctx, `SELECT coalesce(media_key, '') FROM license_stamps WHERE purchase_id = $1`, phonePurchase).Scan(&stamped)
		return stamped != ""
	}, func() string { return "no licensed copy of the phone's clip" })
	original, err := os.ReadFile(phone)
	if err != nil {
		t.Fatal(err)
	}
	copyData, err := e.readStored(t, stamped)
	if err != nil {
		t.Fatal(err)
	}
	wantSize, wantRot := shownSize(t, original, ".mp4")
	if size, rot := shownSize(t, copyData, ".mp4"); size != wantSize || rot != wantRot || rot == "" {
		t.Fatalf("licensed copy shows %s turned %q; the original %s turned %q", size, rot, wantSize, wantRot)
	}
}
