package search

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"broll/catalog"
	"broll/catalog/catalogtest"
)

func TestCalibrationListsEndAtTheConfiguredList(t *testing.T) {
	if got, want := calibrationListsUpTo(120), []int{20, 30, 40, 60, 80, 100, 120}; !slices.Equal(got, want) {
		t.Errorf("up to 120: %v, want %v", got, want)
	}
	if got, want := calibrationListsUpTo(50), []int{20, 30, 40, 50}; !slices.Equal(got, want) {
		t.Errorf("up to 50: %v, want %v", got, want)
	}
	if got, want := calibrationListsUpTo(10), []int{10}; !slices.Equal(got, want) {
		t.Errorf("up to 10: %v, want %v", got, want)
	}
}

// Uniform random vectors are the hardest case for a graph: the smallest
// lists miss many true neighbours, so the calibration has to climb. What
// it chose is the first list whose recall reached the target (or the
// configured list), it is stored, and a calibrated node walks with it,
// never with more than its own configured list.
func TestCalibrationChoosesTheSmallestListThatReachesTheTarget(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	bulkClips(t, b, 1500, 31)
	svc, _ := indexOnly(t, b)
	svc.calibrate = true
	c, err := svc.Calibrate(b.Ctx, "random", CalibrateOptions{Target: 0.9, Queries: 40})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chose %d (recall %.3f), tried %v", c.EfSearch, c.Recall, c.Measured)
	if c.Queries != 40 || c.Target != 0.9 || c.Source != SourceClips || len(c.Measured) == 0 {
		t.Fatalf("calibration: %+v", c)
	}
	if len(c.Measured) < 2 {
		t.Fatalf("the first list (20) reached %.3f on uniform vectors: the test shows no climb", c.Measured[0].Recall)
	}
	last := c.Measured[len(c.Measured)-1]
	if last.EfSearch != c.EfSearch || last.Recall != c.Recall {
		t.Fatalf("chose %d (%.3f), but the last list tried was %+v", c.EfSearch, c.Recall, last)
	}
	for _, m := range c.Measured[:len(c.Measured)-1] {
		if m.Recall >= c.Target {
			t.Fatalf("list %d reached %.3f, yet the calibration went on to %d", m.EfSearch, m.Recall, c.EfSearch)
		}
	}
	if c.Recall < c.Target && c.EfSearch != svc.efSearch {
		t.Fatalf("the target was not reached, yet %d is not the configured list %d", c.EfSearch, svc.efSearch)
	}
	stored, err := svc.Calibrations(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 || stored[0].EfSearch != c.EfSearch || stored[0].Recall != c.Recall || stored[0].Source != SourceClips ||
		!slices.Equal(stored[0].Measured, c.Measured) || time.Since(stored[0].MeasuredAt) > time.Minute {
		t.Fatalf("stored %+v, calibrated %+v", stored, c)
	}

	// A node walks with the stored list; a model never calibrated, or a
	// node with calibration off, walks with the configured one.
	if got := svc.efFor(b.Ctx, b.Pool, "random"); got != c.EfSearch {
		t.Errorf("efFor(random) = %d, want the calibrated %d", got, c.EfSearch)
	}
	if got := svc.efFor(b.Ctx, b.Pool, "other"); got != svc.efSearch {
		t.Errorf("efFor(other) = %d, want the configured %d", got, svc.efSearch)
	}
	off := NewService(catalog.NewService(catalog.ServiceOptions{Pool: b.Pool}), ServiceOptions{EfSearch: 77})
	if got := off.efFor(b.Ctx, b.Pool, "random"); got != 77 {
		t.Errorf("calibration off: efFor = %d, want 77", got)
	}
	// A stored list above the node's own is capped by it; the node reads
	// the table again once its copy is older than calibrationTTL.
	if _, err := b.Pool.Exec(b.Ctx, `UPDATE semantic_calibrations SET ef_search = 900 WHERE model = 'random'`); err != nil {
		t.Fatal(err)
	}
	if got := svc.efFor(b.Ctx, b.Pool, "random"); got != c.EfSearch {
		t.Errorf("within its TTL the node's copy changed: %d", got)
	}
	svc.calibrated.mu.Lock()
	l := svc.calibrated.lists["random"]
	l.until = time.Now().Add(-time.Second)
	svc.calibrated.lists["random"] = l
	svc.calibrated.mu.Unlock()
	if got := svc.efFor(b.Ctx, b.Pool, "random"); got != svc.efSearch {
		t.Errorf("stored 900: efFor = %d, want the configured %d", got, svc.efSearch)
	}
}

func TestCalibrationNeedsEnoughVectors(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	bulkClips(t, b, 300, 32)
	svc, _ := indexOnly(t, b)
	if _, err := svc.Calibrate(b.Ctx, "random", CalibrateOptions{}); !errors.Is(err, ErrTooFewVectors) {
		t.Fatalf("300 clips: %v, want ErrTooFewVectors", err)
	}
	stored, err := svc.Calibrations(b.Ctx)
	if err != nil || len(stored) != 0 {
		t.Fatalf("stored %v, %v", stored, err)
	}
}

// With enough recent query vectors the calibration asks them, not clips'
// own vectors, and says so; with too few it keeps to the clips.
func TestCalibrationAsksCustomersQueriesWhenThereAreEnough(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	bulkClips(t, b, 1200, 33)
	svc, _ := indexOnly(t, b)
	rng := rand.New(rand.NewPCG(34, 1))
	recent := make([][]float32, MinQueryVectors)
	for i := range recent {
		recent[i] = randomUnit(rng)
	}
	c, err := svc.Calibrate(b.Ctx, "random", CalibrateOptions{Target: 0.5, Queries: 30, QueryVectors: recent})
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != SourceQueries || c.Queries != 30 {
		t.Fatalf("%d recent queries: source %q, %d queries asked", len(recent), c.Source, c.Queries)
	}
	c, err = svc.Calibrate(b.Ctx, "random", CalibrateOptions{Target: 0.5, Queries: 30, QueryVectors: recent[:MinQueryVectors-1]})
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != SourceClips {
		t.Fatalf("%d recent queries: source %q, want the clips", MinQueryVectors-1, c.Source)
	}
	stored, err := svc.Calibrations(b.Ctx)
	if err != nil || len(stored) != 1 || stored[0].Source != SourceClips {
		t.Fatalf("stored %+v, %v", stored, err)
	}
}
