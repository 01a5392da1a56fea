package mediajobs

import (
	"os"
	"testing"

	"github.com/google/uuid"

	"broll/catalog/imports"
)

// A media batch writes its clips in one go: the sound one on sale with its
// vector, the corrupt one failed and never sold, and the one imported
// again while the batch ran left to the job of its new file.
func TestMediaBatchStoresOnceAndSkipsReimported(t *testing.T) {
	t.Parallel()
	b := setup(t)
	video, err := os.ReadFile(renderFile(t, "v.mp4", "-f", "lavfi", "-i", "testsrc=size=160x90:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"))
	if err != nil {
		t.Fatal(err)
	}
	b.writeFile(t, "good.mp4", video)
	b.writeFile(t, "cut.mp4", video[:len(video)/2])
	sound, corrupt, again := uuid.New(), uuid.New(), uuid.New()
	clip := func(id uuid.UUID, title, file string) imports.VideoInput {
		return imports.VideoInput{ID: id.String(), Title: title, Emotion: "happy", Gender: "female", Difficulty: "easy", MediaFile: file}
	}
	clips := []imports.VideoInput{clip(sound, "Zebra at dawn", "good.mp4"), clip(corrupt, "Zebra cut short", "cut.mp4"),
		clip(again, "Zebra imported twice", "good.mp4")}
	if _, err := b.imp.ImportVideos(b.ctx, clips, b.src, nil); err != nil {
		t.Fatal(err)
	}
	probed, err := b.svc.ProbePending(b.ctx, []uuid.UUID{sound, corrupt, again, uuid.New()}, "m")
	if err != nil || len(probed) != 3 {
		t.Fatalf("probe = %+v, %v", probed, err)
	}
	vectors := map[uuid.UUID][]float32{}
	for _, p := range probed {
		if p.ID != corrupt && (p.Err != nil || !p.NeedsVector || p.Text == "") {
			t.Fatalf("probe of %s: %+v", p.ID, p)
		}
		vec := make([]float32, 768)
		vec[0] = 1
		vectors[p.ID] = vec
	}
	// Imported again between its probe and the batch's write.
	if _, err := b.imp.ImportVideos(b.ctx, clips[2:], b.src, nil); err != nil {
		t.Fatal(err)
	}
	res, err := b.svc.StoreProbed(b.ctx, "m", probed, vectors)
	if err != nil || res != (ProbedResult{Ready: 1, Embedded: 1, Refused: 1, Skipped: 1}) {
		t.Fatalf("store = %+v, %v", res, err)
	}
	if n := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND retired_at IS NULL AND media_status = 'ready'
		AND embedding_status = 'ready' AND embedding_model = 'm' AND orientation = 'horizontal' AND width = 160`, sound); n != 1 {
		t.Fatal("the sound clip is not on sale with its vector and figures")
	}
	if n := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND retired_at IS NOT NULL AND media_status = 'failed'
		AND media_error <> ''`, corrupt); n != 1 {
		t.Fatal("the truncated clip is not failed and off sale")
	}
	if n := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND retired_at IS NOT NULL AND media_status = 'pending'
		AND embedding_status = 'pending'`, again); n != 1 {
		t.Fatal("the clip imported again was written from its old probe")
	}
	// The sound clip came without preview or thumbnail: they follow.
	if n := b.count(t, `SELECT count(*) FROM job_outbox WHERE kind = 'previews' AND video_id = $1`, sound); n != 1 {
		t.Fatalf("preview jobs of the sound clip: %d, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM webhook_events WHERE type = 'clips.embedded' AND data->'video_ids' ? $1`, sound.String()); n != 1 {
		t.Fatalf("clips.embedded events naming the clip: %d, want 1", n)
	}
}
