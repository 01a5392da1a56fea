package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"broll/catalog/catalogtest"
)

// `clips reprobe` opens a run over the stored clips through the job
// outbox and prints it at once; --run shows the run's report as it stands
// (here, with no worker, every clip pending), --wait without a worker
// gives up at its timeout pointing at --run, and bad flags change nothing.
func TestClipsReprobeCommand(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "clip.mp4"), []byte("stands for a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := `{"title":"Woman laughing in a car","emotion":"laughing","gender":"female","difficulty":"easy","media_file":"clip.mp4"}
{"title":"Man cooking","emotion":"happy","gender":"male","difficulty":"hard","media_file":"clip.mp4"}
{"title":"Child drawing","emotion":"happy","gender":"male","difficulty":"easy","media_file":"clip.mp4"}
`
	file := filepath.Join(dir, "clips.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	c.mustRun(t, "clips", "import", file)
	var ids []uuid.UUID
	rows, err := c.pool.Query(ctx, `SELECT id FROM videos ORDER BY title`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Two clips probed; the third still waits for its first probe.
	catalogtest.MediaPassed(t, c.pool, ids[0], ids[1])

	all := c.mustRun(t, "clips", "reprobe")
	if all["queued"] != 2.0 || all["run_id"] == nil {
		t.Fatalf("reprobe: %v", all)
	}
	one := c.mustRun(t, "clips", "reprobe", "--id", ids[0].String())
	if one["queued"] != 1.0 {
		t.Fatalf("reprobe --id: %v", one)
	}
	if n := c.mustRun(t, "clips", "reprobe", "--since", "2999-01-01"); n["queued"] != 0.0 {
		t.Fatalf("reprobe --since the future: %v", n)
	}
	// The first run keeps the clip the second did not take.
	rep := c.mustRun(t, "clips", "reprobe", "--run", all["run_id"].(string))
	if rep["queued"] != 1.0 || rep["pending"] != 1.0 || rep["done"] != 0.0 {
		t.Fatalf("report of the first run: %v", rep)
	}
	// Recorded beside the run, and handed to the media queue.
	if n, err := c.rdb.LLen(ctx, "asynq:{"+c.prefix+"media}:pending").Result(); err != nil || n == 0 {
		t.Fatalf("no reprobe task on the media queue: %d, %v", n, err)
	}
	c.mustFail(t, "still pending", "clips", "reprobe", "--id", ids[1].String(), "--wait", "--timeout", "1s")

	c.mustFail(t, "not a UUID", "clips", "reprobe", "--id", "nope")
	c.mustFail(t, "not both", "clips", "reprobe", "--id", ids[0].String(), "--since", "1d")
	c.mustFail(t, "not found", "clips", "reprobe", "--id", uuid.NewString())
	c.mustFail(t, "not found", "clips", "reprobe", "--run", uuid.NewString())
	c.mustFail(t, "no other flag", "clips", "reprobe", "--run", uuid.NewString(), "--wait")
	c.mustFail(t, "since", "clips", "reprobe", "--since", "last tuesday")

	status := c.mustRun(t, "clips", "status")
	media, _ := status["media"].(map[string]any)
	if media["mismatched"] != 0.0 || media["trailing_bytes"] != 0.0 {
		t.Fatalf("clips status media: %v", media)
	}
}
