package mediajobs

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/imports"
)

// A line whose figures disagree with its file: the clip shows the file's
// (what a buyer downloads), and content ops see each figure that differs,
// in the clip's state and in the status; a line that agrees within a
// frame (and an fps within 1%) shows none, and a line that gives no
// figures has nothing to disagree with.
func TestProbeMismatchesAreShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// 160x90, 2 s at 25 fps.
	video, err := os.ReadFile(renderFile(t, "v.mp4", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:duration=2",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"))
	if err != nil {
		t.Fatal(err)
	}
	b.writeFile(t, "v.mp4", video)
	wrong, near, bare := uuid.New(), uuid.New(), uuid.New()
	num := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	clip := func(id uuid.UUID, title string) imports.VideoInput {
		return imports.VideoInput{ID: id.String(), Title: title, Emotion: "happy", Gender: "female", Difficulty: "easy", MediaFile: "v.mp4"}
	}
	w := clip(wrong, "Listed as a tall phone clip")
	w.Width, w.Height, w.DurationSeconds, w.FPS, w.Orientation = i(1080), i(1920), num(28.4), num(30), "vertical"
	c := clip(near, "Listed within a frame")
	c.Width, c.Height, c.DurationSeconds, c.FPS, c.Orientation = i(160), i(90), num(2.03), num(25.1), "horizontal"
	if _, err := b.imp.ImportVideos(b.ctx, []imports.VideoInput{w, c, clip(bare, "Listed bare")}, b.src, nil); err != nil {
		t.Fatal(err)
	}
	probed, err := b.svc.ProbePending(b.ctx, []uuid.UUID{wrong, near, bare}, "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.StoreProbed(b.ctx, "m", probed, nil); err != nil {
		t.Fatal(err)
	}

	want := []catalog.Mismatch{
		{Field: "width", Listed: 1080.0, Probed: 160.0},
		{Field: "height", Listed: 1920.0, Probed: 90.0},
		{Field: "duration_seconds", Listed: 28.4, Probed: 2.0},
		{Field: "fps", Listed: 30.0, Probed: 25.0},
		{Field: "orientation", Listed: "vertical", Probed: "horizontal"},
	}
	st, err := b.cat.ClipState(b.ctx, wrong)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Mismatches, want) {
		t.Fatalf("mismatches = %+v, want %+v", st.Mismatches, want)
	}
	// The clip is listed with its file's figures, its embedded text too.
	if n := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND width = 160 AND height = 90
		AND orientation = 'horizontal' AND duration_seconds = 2 AND fps = 25 AND retired_at IS NULL`, wrong); n != 1 {
		t.Fatal("the clip does not show its file's figures")
	}
	for _, id := range []uuid.UUID{near, bare} {
		st, err := b.cat.ClipState(b.ctx, id)
		if err != nil || len(st.Mismatches) != 0 {
			t.Fatalf("clip %s: mismatches %+v, %v; want none", id, st.Mismatches, err)
		}
	}
	status, err := b.cat.Status(b.ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if status.Media.Mismatched != 1 || len(status.Media.MismatchedClips) != 1 ||
		status.Media.MismatchedClips[0].ID != wrong || !reflect.DeepEqual(status.Media.MismatchedClips[0].Mismatches, want) {
		t.Fatalf("status media = %+v", status.Media)
	}

	// The line corrected and imported again: the next probe compares
	// afresh, and the report is empty.
	w.Width, w.Height, w.DurationSeconds, w.FPS, w.Orientation = i(160), i(90), num(2), num(25), "horizontal"
	if _, err := b.imp.ImportVideos(b.ctx, []imports.VideoInput{w}, b.src, nil); err != nil {
		t.Fatal(err)
	}
	probed, err = b.svc.ProbePending(b.ctx, []uuid.UUID{wrong}, "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.StoreProbed(b.ctx, "m", probed, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := b.cat.ClipState(b.ctx, wrong); err != nil || len(st.Mismatches) != 0 {
		t.Fatalf("after the corrected line: mismatches %+v, %v", st.Mismatches, err)
	}
	if status, err := b.cat.Status(b.ctx, "m"); err != nil || status.Media.Mismatched != 0 {
		t.Fatalf("after the corrected line: status media %+v, %v", status.Media, err)
	}
}

// Clips whose file ends in bytes that form no box (recorded by the probe
// in media_trailing_bytes) are counted and listed by the status, and the
// clip's state carries the count.
func TestStatusNotesTrailingBytes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := importN(t, b, 2)
	if _, err := b.pool.Exec(b.ctx, `UPDATE videos SET media_trailing_bytes = 3072, media_status = 'ready',
		media_processed_at = now() WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	st, err := b.cat.Status(b.ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if st.Media.TrailingBytes != 1 || len(st.Media.TrailingBytesClips) != 1 ||
		st.Media.TrailingBytesClips[0] != (catalog.MediaTrailingRow{ID: ids[0], Title: "Man waiting for the bus", TrailingBytes: 3072}) {
		t.Fatalf("status media = %+v", st.Media)
	}
	for i, want := range []*int64{new(int64(3072)), nil} {
		c, err := b.cat.ClipState(b.ctx, ids[i])
		if err != nil || !reflect.DeepEqual(c.TrailingBytes, want) {
			t.Fatalf("clip %d trailing bytes = %v, %v", i, c.TrailingBytes, err)
		}
	}
}

// An MP4 an uploader tool appended bytes to passes the probe, is sold,
// and the status notes it with the count the probe read.
func TestTrailingBytesNotedByTheProbe(t *testing.T) {
	t.Parallel()
	b := setup(t)
	video, err := os.ReadFile(renderFile(t, "v.mp4", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"))
	if err != nil {
		t.Fatal(err)
	}
	tail := bytes.Repeat([]byte("uploader note "), 219)[:3066]
	b.writeFile(t, "tail.mp4", append(video, tail...))
	id := uuid.New()
	if _, err := b.imp.ImportVideos(b.ctx, []imports.VideoInput{{ID: id.String(), Title: "Appended to", Emotion: "happy",
		Gender: "female", Difficulty: "easy", MediaFile: "tail.mp4"}}, b.src, nil); err != nil {
		t.Fatal(err)
	}
	probed, err := b.svc.ProbePending(b.ctx, []uuid.UUID{id}, "m")
	if err != nil || len(probed) != 1 || probed[0].Err != nil {
		t.Fatalf("probe = %+v, %v", probed, err)
	}
	if _, err := b.svc.StoreProbed(b.ctx, "m", probed, nil); err != nil {
		t.Fatal(err)
	}
	st, err := b.cat.Status(b.ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if st.Media.TrailingBytes != 1 || len(st.Media.TrailingBytesClips) != 1 ||
		st.Media.TrailingBytesClips[0].ID != id || st.Media.TrailingBytesClips[0].TrailingBytes != int64(len(tail)) {
		t.Fatalf("status media = %+v, want the clip noted with %d trailing bytes", st.Media, len(tail))
	}
	if c, err := b.cat.ClipState(b.ctx, id); err != nil || !c.Listed {
		t.Fatalf("clip state = %+v, %v; want it on sale", c, err)
	}
}
