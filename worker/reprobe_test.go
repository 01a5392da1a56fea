package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/catalog/imports"
	"broll/catalog/mediajobs"
	"broll/embed"
	"broll/internal/testkit"
	"broll/worker"
)

// TestReprobeMendsStoredClips runs `clips reprobe` through the job outbox
// and a real worker over three clips on sale: one whose stored geometry is
// stale (as an earlier probe that ignored the display matrix wrote it) is
// corrected and its embedding made again from its new text; one that reads
// as stored is reported unchanged and left alone; one whose file became
// unsound is taken off sale with the probe's reason.
func TestReprobeMendsStoredClips(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	stale, same, broken := uuid.New(), uuid.New(), uuid.New()
	var clips []imports.VideoInput
	for _, c := range []struct {
		id    uuid.UUID
		title string
	}{{stale, "Skater in the park"}, {same, "Cook in the kitchen"}, {broken, "Runner by the river"}} {
		clips = append(clips, imports.VideoInput{ID: c.id.String(), Title: c.title, Emotion: "happy", Gender: "female",
			Difficulty: "easy", MediaFile: testkit.RenderVideo(t, 320, 180, 1)})
	}
	if _, err := e.imports.ImportVideos(ctx, clips, "", nil); err != nil {
		t.Fatal(err)
	}
	e.start(t, embed.NewBuiltin(), worker.Options{})
	count := func(q string, args ...any) int {
		var n int
		if err := e.pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	waitFor(t, 60*time.Second, func() bool {
		return count(`SELECT count(*) FROM videos WHERE media_status = 'ready' AND embedding_status = 'ready'
			AND retired_at IS NULL AND thumbnail_key IS NOT NULL AND preview_key IS NOT NULL`) == 3
	}, func() string { return "the clips did not go on sale with their vectors, previews and thumbnails" })

	// The stale row: what a probe blind to the display matrix stored.
	if _, err := e.pool.Exec(ctx, `UPDATE videos SET width = 180, height = 320, orientation = 'vertical'
		WHERE id = $1`, stale); err != nil {
		t.Fatal(err)
	}
	var key string
	if err := e.pool.QueryRow(ctx, `SELECT media_key FROM videos WHERE id = $1`, broken).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.cfg.MediaDir, filepath.FromSlash(key)), []byte("no longer a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	var embeddedBefore time.Time
	if err := e.pool.QueryRow(ctx, `SELECT max(embedded_at) FROM videos`).Scan(&embeddedBefore); err != nil {
		t.Fatal(err)
	}

	jobs := e.mediaJobs
	run, err := jobs.Reprobe(ctx, mediajobs.ReprobeFilter{})
	if err != nil || run.Queued != 3 {
		t.Fatalf("reprobe = %+v, %v", run, err)
	}
	var rep mediajobs.ReprobeReport
	waitFor(t, 60*time.Second, func() bool {
		rep, err = jobs.ReprobeReport(ctx, run.RunID)
		return err == nil && rep.Pending == 0
	}, func() string { return fmt.Sprintf("reprobe report: %+v, %v", rep, err) })
	if queued, done, err := jobs.ReprobeProgress(ctx, run.RunID); err != nil || queued != 3 || done != 3 {
		t.Fatalf("progress = %d of %d, %v; want 3 of 3", done, queued, err)
	}

	t.Run("the stale clip is corrected", func(t *testing.T) {
		want := []mediajobs.Change{{Field: "width", From: 180.0, To: 320.0}, {Field: "height", From: 320.0, To: 180.0},
			{Field: "orientation", From: "vertical", To: "horizontal"}}
		if len(rep.Changed) != 1 || rep.Changed[0].ID != stale || !reflect.DeepEqual(rep.Changed[0].Changes, want) {
			t.Fatalf("changed = %+v, want %s with %+v", rep.Changed, stale, want)
		}
		if n := count(`SELECT count(*) FROM videos WHERE id = $1 AND width = 320 AND height = 180
			AND orientation = 'horizontal' AND retired_at IS NULL`, stale); n != 1 {
			t.Fatal("the stale clip's row was not corrected")
		}
		// Its embedding was queued and made again, from the new text.
		waitFor(t, 30*time.Second, func() bool {
			return count(`SELECT count(*) FROM videos WHERE id = $1 AND embedding_status = 'ready'
				AND NOT embedding_stale AND embedded_at > $2`, stale, embeddedBefore) == 1
		}, func() string { return "the stale clip's embedding was not made again" })
		in, err := e.cat.EmbeddingInputs(ctx, []uuid.UUID{stale})
		if err != nil || len(in) != 1 {
			t.Fatalf("embedding inputs: %+v %v", in, err)
		}
		vec, err := embed.NewBuiltin().Embed(ctx, embed.Document, []string{in[0].Text})
		if err != nil {
			t.Fatal(err)
		}
		if n := count(`SELECT count(*) FROM videos WHERE id = $1 AND embedding = $2::float4[]::vector`, stale, vec[0]); n != 1 {
			t.Fatalf("the stored vector is not that of the clip's text %q", in[0].Text)
		}
	})
	t.Run("the sound clip is unchanged", func(t *testing.T) {
		if rep.Unchanged != 1 || rep.Done != 3 {
			t.Fatalf("report = %+v, want one unchanged of 3 done", rep)
		}
		if n := count(`SELECT count(*) FROM videos WHERE id = $1 AND embedded_at <= $2 AND NOT embedding_stale
			AND retired_at IS NULL`, same, embeddedBefore); n != 1 {
			t.Fatal("the unchanged clip was embedded again or taken off sale")
		}
	})
	t.Run("the unsound clip is off sale with its reason", func(t *testing.T) {
		if len(rep.Refused) != 1 || rep.Refused[0].ID != broken || rep.Refused[0].Reason == "" {
			t.Fatalf("refused = %+v", rep.Refused)
		}
		st, err := e.cat.ClipState(ctx, broken)
		if err != nil || st.Listed || st.MediaStatus != "failed" || st.MediaError == nil || *st.MediaError != rep.Refused[0].Reason {
			t.Fatalf("clip state = %+v, %v", st, err)
		}
	})
}
