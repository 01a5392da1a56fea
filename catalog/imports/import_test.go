package imports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/apperr"
)

// line renders a clip line from a good base clip with fields changed
// (a nil value deletes the field).
func line(t *testing.T, changes map[string]any) string {
	t.Helper()
	c := map[string]any{
		"title": "Young woman laughing at phone on the couch", "emotion": "laughing",
		"gender": "female", "difficulty": "easy", "media_file": "media/full.avi",
	}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImportRejectsBadLinesAndImportsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	if err := os.MkdirAll(filepath.Join(b.src, "media", "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	dupID := uuid.NewString()
	manyTags := make([]string, 51)
	for i := range manyTags {
		manyTags[i] = fmt.Sprint("tag", i)
	}

	// Each entry is one line of the file and the fields it must be
	// reported for; nil means the line is fine.
	lines := []struct {
		text   string
		fields []string
	}{
		{line(t, nil), nil},
		{`{"title": "cut off", `, []string{""}},
		{"", nil},
		{`[1, 2]`, []string{""}},
		{line(t, map[string]any{"orientaton": "vertical"}), []string{"orientaton"}},
		{line(t, map[string]any{"title": nil}), []string{"title"}},
		{line(t, map[string]any{"title": "   "}), []string{"title"}},
		{line(t, map[string]any{"title": strings.Repeat("é", 301)}), []string{"title"}},
		{line(t, map[string]any{"emotion": "joyful"}), []string{"emotion"}},
		{line(t, map[string]any{"gender": "other"}), []string{"gender"}},
		{line(t, map[string]any{"age_range": "30-40"}), []string{"age_range"}},
		{line(t, map[string]any{"media_type": "audio"}), []string{"media_type"}},
		{line(t, map[string]any{"orientation": "diagonal"}), []string{"orientation"}},
		{line(t, map[string]any{"id": "not-a-uuid"}), []string{"id"}},
		{line(t, map[string]any{"virality_score": 101}), []string{"virality_score"}},
		{line(t, map[string]any{"virality_score": -1}), []string{"virality_score"}},
		{line(t, map[string]any{"virality_score": 50.5}), []string{"virality_score"}},
		{line(t, map[string]any{"duration_seconds": -3}), []string{"duration_seconds"}},
		{line(t, map[string]any{"width": 0, "height": -5}), []string{"width", "height"}},
		{line(t, map[string]any{"width": "wide"}), []string{"width"}},
		{line(t, map[string]any{"fps": 0}), []string{"fps"}},
		{line(t, map[string]any{"difficulty": "legendary"}), []string{"difficulty"}},
		{line(t, map[string]any{"difficulty": nil}), []string{"difficulty"}},
		{line(t, map[string]any{"media_file": nil}), []string{"media_file"}},
		{line(t, map[string]any{"media_file": "media/missing.avi"}), []string{"media_file"}},
		{line(t, map[string]any{"media_file": "media/adir"}), []string{"media_file"}},
		{line(t, map[string]any{"preview_file": "media/missing.gif"}), []string{"preview_file"}},
		{line(t, map[string]any{"model": map[string]any{"id": ""}}), []string{"model.id", "model.name"}},
		{line(t, map[string]any{"model": "Ava"}), []string{"model"}},
		{line(t, map[string]any{"tags": manyTags}), []string{"tags"}},
		{line(t, map[string]any{"emotion": nil, "gender": nil}), []string{"emotion", "gender"}},
		{line(t, nil) + " " + line(t, nil), []string{""}},
		{line(t, map[string]any{"id": dupID}), nil},
		{line(t, map[string]any{"id": dupID}), []string{"id"}},
		{"   ", nil},
		{line(t, map[string]any{"tags": []string{"ok"}}) + "\r", nil},
	}
	var file strings.Builder
	want := map[string]bool{}
	for i, l := range lines {
		file.WriteString(l.text + "\n")
		for _, f := range l.fields {
			want[fmt.Sprintf("%d:%s", i+1, f)] = true
		}
	}

	_, err := b.svc.Import(b.ctx, strings.NewReader(file.String()), b.src, nil)
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if apperr.CodeOf(err) != apperr.Invalid {
		t.Errorf("code = %s, want invalid_request", apperr.CodeOf(err))
	}
	got := map[string]bool{}
	for _, le := range ie.Lines {
		got[fmt.Sprintf("%d:%s", le.Line, le.Field)] = true
		if le.Message == "" {
			t.Errorf("%v has no message", le)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("missing error %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("unexpected error %s", k)
		}
	}

	// Messages name the allowed values.
	for _, le := range ie.Lines {
		switch le.Field {
		case "emotion":
			if !strings.Contains(le.Message, "neutral, happy, playful") {
				t.Errorf("emotion message %q lacks the allowed values", le.Message)
			}
		case "difficulty":
			if !strings.Contains(le.Message, "easy, medium, hard") {
				t.Errorf("difficulty message %q lacks the tiers", le.Message)
			}
		}
	}
	badLines := 0
	for _, l := range lines {
		if l.fields != nil {
			badLines++
		}
	}
	if n := ie.BadLines(); n != badLines {
		t.Errorf("BadLines = %d, want %d", n, badLines)
	}
	if msg := err.Error(); !strings.Contains(msg, "nothing was imported") || !strings.Contains(msg, "line 2") {
		t.Errorf("summary = %q", msg)
	}

	if n := b.count(t, `SELECT count(*) FROM videos`); n != 0 {
		t.Fatalf("%d videos written by a rejected import", n)
	}
	if entries, _ := os.ReadDir(b.media.Dir()); len(entries) != 0 {
		t.Fatalf("media written by a rejected import")
	}
	if len(b.queue.Taken()) != 0 {
		t.Fatalf("embeddings queued by a rejected import")
	}
}

func TestImportReportsLinesAfterAnOverlongLine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	in := line(t, nil) + "\n" + `{"title": "` + strings.Repeat("x", maxLineBytes+10) + `"}` + "\n" +
		line(t, map[string]any{"emotion": "meh"}) + "\n"
	_, err := b.svc.Import(b.ctx, strings.NewReader(in), b.src, nil)
	var ie *Error
	if !errors.As(err, &ie) || len(ie.Lines) != 2 || ie.Lines[0].Line != 2 || ie.Lines[1].Line != 3 ||
		ie.Lines[1].Field != "emotion" {
		t.Fatalf("err = %v", err)
	}
}

func TestImportClipsReportsPositions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	good := VideoInput{Title: "Man driving at night", Emotion: "excited", Gender: "male", Difficulty: "hard",
		MediaFile: "media/full.avi"}
	bad := good
	bad.Gender = "robot"
	_, err := b.svc.ImportVideos(b.ctx, []VideoInput{good, good, bad}, b.src, nil)
	var ie *Error
	if !errors.As(err, &ie) || len(ie.Lines) != 1 || ie.Lines[0] != (LineError{3, "gender", ie.Lines[0].Message}) {
		t.Fatalf("err = %v", err)
	}
	res, err := b.svc.ImportVideos(b.ctx, []VideoInput{good, good}, b.src, nil)
	if err != nil || res != (Result{Created: 2, Queued: 2}) {
		t.Fatalf("ImportVideos = %+v, %v", res, err)
	}
}

func TestImportCreatesThenUpdates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	full := []byte("full-quality bytes")
	b.writeFile(t, "media/full.avi", full)
	b.writeFile(t, "media/preview.gif", []byte("GIF89a"))
	b.writeFile(t, "media/thumb.jpg", []byte("\xff\xd8\xff"))
	absThumb := filepath.Join(b.src, "media", "thumb.jpg")
	idA, idB := uuid.New(), uuid.New()

	clipA := map[string]any{
		"id": idA.String(), "title": " Woman sipping a latte in a cafe ", "description": "Morning light.",
		"tags": []string{"Coffee", " coffee ", "Morning", ""}, "emotion": "happy", "gender": "female",
		"age_range": "25-34", "location": " Cafe ", "orientation": "vertical", "duration_seconds": 12.5,
		"width": 1080, "height": 1920, "fps": 30, "difficulty": "medium", "virality_score": 77,
		"model":      map[string]any{"id": "mdl_maya", "name": "Maya Rodriguez"},
		"media_file": "media/full.avi", "preview_file": "media/preview.gif", "thumbnail_file": "media/thumb.jpg",
	}
	clipB := map[string]any{
		"id": idB.String(), "title": "Older man reading a label", "emotion": "curious", "gender": "male",
		"difficulty": "easy", "media_type": "image", "media_file": absThumb,
	}
	noID := map[string]any{"title": "Non-binary person jogging", "emotion": "confident",
		"gender": "non_binary", "difficulty": "hard", "media_file": "media/full.avi"}
	file := jsonl(t, clipA, noID, clipB)

	res, err := b.svc.Import(b.ctx, strings.NewReader(file), b.src, nil)
	if err != nil || res != (Result{Created: 3, Queued: 3}) {
		t.Fatalf("Import = %+v, %v", res, err)
	}
	// Each new clip waits for its media batch, which embeds it once its
	// probe has settled its text; nothing goes to the embed queue alone.
	if q := b.queue.Taken(); len(q) != 0 {
		t.Fatalf("queued for embedding before the probe: %v", q)
	}
	if n := b.count(t, `SELECT count(DISTINCT video_id) FROM job_outbox WHERE kind = 'media'
		AND video_id = ANY ($1)`, []uuid.UUID{idA, idB}); n != 2 {
		t.Fatalf("media jobs of A and B: %d, want 2", n)
	}

	var title, location, mediaType, orientation, modelID, modelName, mediaKey, ctype, status string
	var previewKey, thumbKey *string
	var tags []string
	var size int64
	var virality, width int
	err = b.pool.QueryRow(b.ctx, `
		SELECT title, tags, location, media_type, orientation, model_id, model_name, media_key,
		       media_content_type, media_size, preview_key, thumbnail_key, embedding_status,
		       virality_score, width
		FROM videos WHERE id = $1`, idA).Scan(&title, &tags, &location, &mediaType, &orientation,
		&modelID, &modelName, &mediaKey, &ctype, &size, &previewKey, &thumbKey, &status, &virality, &width)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "clips/" + idA.String() + "/"
	if title != "Woman sipping a latte in a cafe" || strings.Join(tags, ",") != "coffee,morning" ||
		location != "cafe" || mediaType != "video" || orientation != "vertical" || modelID != "mdl_maya" ||
		modelName != "Maya Rodriguez" || mediaKey != prefix+"full.avi" || ctype != "video/x-msvideo" ||
		size != int64(len(full)) || previewKey == nil || *previewKey != prefix+"preview.gif" ||
		thumbKey == nil || *thumbKey != prefix+"thumbnail.jpg" || status != "pending" || virality != 77 ||
		width != 1080 {
		t.Fatalf("row A = %q %v %q %q %q %q %q %q %q %d %v %v %q %d",
			title, tags, location, mediaType, orientation, modelID, modelName, mediaKey, ctype, size,
			previewKey, thumbKey, status, virality)
	}
	f, err := b.media.Open(b.ctx, mediaKey)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(stored, full) {
		t.Fatalf("stored media differs")
	}
	if n := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND media_type = 'image'
		AND media_key = $2 AND media_content_type = 'image/jpeg' AND preview_key IS NULL`,
		idB, "clips/"+idB.String()+"/full.jpg"); n != 1 {
		t.Fatalf("row B not as imported")
	}
	if n := b.count(t, `SELECT count(*) FROM videos WHERE media_type = 'video' AND age_range IS NULL
		AND difficulty = 'hard' AND preview_key IS NULL AND thumbnail_key IS NULL`); n != 1 {
		t.Fatalf("clip without id not created with defaults")
	}

	// Both embedded; then A changes only its size (no new vector needed)
	// and B its title (needs one).
	vec := make([]float32, 768)
	vec[0] = 1
	if err := b.cat.StoreEmbeddings(b.ctx, "m1", []catalog.Embedding{{ID: idA, Vector: vec}, {ID: idB, Vector: vec}}); err != nil {
		t.Fatal(err)
	}
	b.queue.Reset()
	clipA["width"] = 720
	clipB["title"] = "Older man reading a label in a grocery store"
	res, err = b.svc.Import(b.ctx, strings.NewReader(jsonl(t, clipA, clipB)), b.src, nil)
	if err != nil || res != (Result{Updated: 2, Queued: 1}) {
		t.Fatalf("re-import = %+v, %v", res, err)
	}
	if q := b.queue.Taken(); len(q) != 0 {
		t.Fatalf("queued = %v, want nothing before the probe", q)
	}
	if n := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND width = 720
		AND embedding_status = 'ready' AND embedding IS NOT NULL AND embedding_model = 'm1'`, idA); n != 1 {
		t.Fatalf("A lost its embedding on a change that does not touch its text")
	}
	if n := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND embedding_status = 'pending'
		AND embedding IS NULL AND embedding_model IS NULL AND embedded_at IS NULL
		AND title LIKE '%grocery store'`, idB); n != 1 {
		t.Fatalf("B kept a stale embedding")
	}
	if n := b.count(t, `SELECT count(*) FROM videos`); n != 3 {
		t.Fatalf("videos = %d, want 3", n)
	}
}

func TestImportWithoutQueueLeavesClipsPending(t *testing.T) {
	t.Parallel()
	b := setup(t)
	svc := newService(b.pool, b.media, nil)
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	res, err := svc.Import(b.ctx, strings.NewReader(line(t, nil)), b.src, nil)
	if err != nil || res != (Result{Created: 1}) {
		t.Fatalf("Import = %+v, %v", res, err)
	}
	res, err = svc.Import(b.ctx, strings.NewReader("\n \n"), b.src, nil)
	if err != nil || res != (Result{}) {
		t.Fatalf("empty import = %+v, %v", res, err)
	}
}

func TestImportLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large import")
	}
	t.Parallel()
	b := setup(t)
	b.writeFile(t, "shared.avi", []byte("RIFF tiny"))
	const n = 20_000
	var file bytes.Buffer
	emotions := catalog.Emotions()
	for i := range n {
		fmt.Fprintf(&file, `{"title":"Clip %d","emotion":%q,"gender":"male","difficulty":"easy","tags":["a","b"],"media_file":"shared.avi"}`+"\n",
			i, emotions[i%len(emotions)])
	}
	var calls [][2]int
	start := time.Now()
	res, err := b.svc.Import(b.ctx, &file, b.src, func(done, total int) { calls = append(calls, [2]int{done, total}) })
	if err != nil || res != (Result{Created: n, Queued: n}) {
		t.Fatalf("Import = %+v, %v", res, err)
	}
	t.Logf("imported %d clips in %v", n, time.Since(start))
	if got := b.count(t, `SELECT count(DISTINCT media_key) FROM videos`); got != n {
		t.Fatalf("distinct media keys = %d", got)
	}
	if len(calls) < 5 || calls[len(calls)-1] != [2]int{n, n} {
		t.Fatalf("progress calls = %v", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] <= calls[i-1][0] {
			t.Fatalf("progress went backwards: %v", calls)
		}
	}
}

func jsonl(t *testing.T, clips ...map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, c := range clips {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// failingMedia refuses every write after the first few.
type failingMedia struct {
	media.Store
	mu   sync.Mutex
	left int
}

func (m *failingMedia) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	m.mu.Lock()
	m.left--
	left := m.left
	m.mu.Unlock()
	if left < 0 {
		return 0, errors.New("disk full")
	}
	return m.Store.Put(ctx, key, r)
}

func TestImportMediaFailureWritesNoRows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	svc := newService(b.pool, &failingMedia{Store: b.media, left: 50}, b.queue)
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	clips := make([]VideoInput, 500)
	for i := range clips {
		clips[i] = VideoInput{Title: "Dad cooking pasta", Emotion: "happy", Gender: "male", Difficulty: "easy",
			MediaFile: "media/full.avi"}
	}
	_, err := svc.ImportVideos(b.ctx, clips, b.src, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if n := b.count(t, `SELECT count(*) FROM videos`); n != 0 {
		t.Fatalf("%d rows written by a failed import", n)
	}
	if len(b.queue.Taken()) != 0 {
		t.Fatalf("failed import queued embeddings")
	}
}

type brokenQueue struct{}

func (brokenQueue) EnqueueEmbed(context.Context, []uuid.UUID) (int, error) {
	return 0, errors.New("redis down")
}

func TestImportQueueFailureKeepsClips(t *testing.T) {
	t.Parallel()
	b := setup(t)
	svc := newService(b.pool, b.media, brokenQueue{})
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	res, err := svc.Import(b.ctx, strings.NewReader(line(t, nil)), b.src, nil)
	// The clip and its job are stored together; the queue being away only
	// delays the job, which the worker's relay queues later.
	if err != nil || res != (Result{Created: 1, Queued: 1}) {
		t.Fatalf("Import = %+v, %v", res, err)
	}
	if st, _ := svc.cat.Status(b.ctx, "m"); st.Pending != 1 {
		t.Fatalf("status = %+v", st)
	}
	if n := b.count(t, `SELECT count(*) FROM job_outbox WHERE kind = 'media'`); n != 1 {
		t.Fatalf("recorded media jobs (probe, then embedding) = %d, want 1", n)
	}
}
