package worker_test

import (
	"context"
	"testing"
	"time"

	"broll/embed"
	"broll/worker"
)

// TestWorkerCalibratesSemanticSearch: a worker with a recall target
// calibrates the candidate list of its embedder's model at its start and
// stores the choice every API node reads; without a target it calibrates
// nothing.
func TestWorkerCalibratesSemanticSearch(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	emb := embed.NewBuiltin()
	if _, err := e.pool.Exec(ctx, `
		INSERT INTO videos (title, emotion, gender, difficulty, media_key, embedding, embedding_model, embedding_status)
		SELECT 'Clip ' || i, 'happy', 'female', 'easy', 'clips/c',
		       (SELECT array_agg(sin(i * 7.3 + d * (1 + i % 17)))::vector(768) FROM generate_series(1, 768) d),
		       $1, 'ready'
		FROM generate_series(1, 1200) i`, emb.Model()); err != nil {
		t.Fatal(err)
	}
	calibrations := func() int {
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM semantic_calibrations WHERE model = $1`, emb.Model()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	stop := e.start(t, emb, worker.Options{})
	time.Sleep(time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := calibrations(); n != 0 {
		t.Fatalf("a worker without a recall target calibrated (%d rows)", n)
	}
	e.start(t, emb, worker.Options{RecallTarget: 0.9})
	deadline := time.Now().Add(30 * time.Second)
	for calibrations() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no calibration stored 30 s after the worker started")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var ef int
	var recall float64
	if err := e.pool.QueryRow(ctx, `SELECT ef_search, recall FROM semantic_calibrations WHERE model = $1`, emb.Model()).
		Scan(&ef, &recall); err != nil {
		t.Fatal(err)
	}
	if ef < 20 || ef > 120 || recall < 0 || recall > 1 {
		t.Fatalf("stored list %d, recall %v", ef, recall)
	}
}
