package main

import (
	"context"
	"testing"

	"broll/embed"
)

// search calibrate measures the catalog's own vectors and stores its
// choice, which search calibrations then lists; a catalog with too few
// vectors is told so and nothing is stored.
func TestSearchCalibrate(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	c.mustFail(t, "too few clips", "search", "calibrate")
	c.mustFail(t, "--target", "search", "calibrate", "--target", "1.5")
	c.mustFail(t, "--queries", "search", "calibrate", "--queries", "0")
	model := embed.NewBuiltin().Model()
	if _, err := c.pool.Exec(context.Background(), `
		INSERT INTO videos (title, emotion, gender, difficulty, media_key, embedding, embedding_model, embedding_status)
		SELECT 'Clip ' || i, 'happy', 'female', 'easy', 'clips/c',
		       (SELECT array_agg(sin(i * 7.3 + d * (1 + i % 17)))::vector(768) FROM generate_series(1, 768) d),
		       $1, 'ready'
		FROM generate_series(1, 1200) i`, model); err != nil {
		t.Fatal(err)
	}
	out := c.mustRun(t, "search", "calibrate", "--target", "0.9", "--queries", "30")
	ef, _ := out["ef_search"].(float64)
	measured, _ := out["measured"].([]any)
	if out["model"] != model || out["source"] != "clips" || ef < 20 || ef > 120 || out["queries"].(float64) != 30 || len(measured) == 0 {
		t.Fatalf("calibrate: %v", out)
	}
	listed := c.mustRun(t, "search", "calibrations")
	cals, _ := listed["calibrations"].([]any)
	if len(cals) != 1 || cals[0].(map[string]any)["ef_search"] != out["ef_search"] || listed["max_ef_search"].(float64) != 120 {
		t.Fatalf("calibrations: %v", listed)
	}
}
