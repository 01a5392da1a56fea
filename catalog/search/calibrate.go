package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"broll/internal/database"
)

// How many candidates a semantic search walks the graph with
// (hnsw.ef_search) decides both its recall and its cost, and the list a
// given recall needs depends on how the model's vectors lie: on the
// benchmark's catalog the built-in embedder's vectors reach recall@10 0.999
// at 40 candidates, a real sentence encoder's about 0.97 at 60, and drawn
// low-rank vectors 0.81 at 120 (docs/performance.md). So the list is
// measured, not guessed: Calibrate asks the whole-catalog graph for the
// nearest clips of a sample of the catalog's own vectors at growing lists
// and keeps, per model, the smallest that reached the recall target, never
// more than the configured list (BROLL_SEMANTIC_EF_SEARCH). The worker
// calibrates every BROLL_SEMANTIC_CALIBRATE_INTERVAL; every API node reads
// the choice (efFor) and walks with it.

// DefaultRecallTarget is the mean recall@10 a calibrated candidate list
// must reach (BROLL_SEMANTIC_RECALL_TARGET).
const DefaultRecallTarget = 0.96

// calibrationK is the recall's depth: a semantic page is 10 clips unless
// asked otherwise.
const calibrationK = 10

// calibrationLists are the candidate lists tried, ascending; the
// configured list is tried last if it is not among them.
var calibrationLists = []int{20, 30, 40, 60, 80, 100, 120, 160, 200, 300, 400, 600, 800, 1000}

// DefaultCalibrationQueries is how many clips' vectors a calibration asks.
const DefaultCalibrationQueries = 200

// minCalibrationClips is the fewest clips with vectors a calibration
// measures: below it every search is cheap and the configured list stays.
const minCalibrationClips = 1000

// calibrationTTL is how long a node keeps the list it read before reading
// it again: a new calibration reaches every node within it.
const calibrationTTL = time.Minute

// ErrTooFewVectors says the catalog has too few clips with vectors of the
// model to calibrate on; the configured list stays.
var ErrTooFewVectors = errors.New("search: too few clips with vectors to calibrate")

// Calibration is what one calibration measured and chose.
type Calibration struct {
	Model string `json:"model"`
	// Source says what the queries were: SourceQueries (customers' recent
	// queries) or SourceClips (sampled clips' own vectors).
	Source string `json:"source"`
	// EfSearch is the chosen list: the smallest tried whose recall reached
	// Target, or the largest tried (the configured list) if none did.
	EfSearch int     `json:"ef_search"`
	Recall   float64 `json:"recall"`
	Target   float64 `json:"target"`
	Queries  int     `json:"queries"`
	// Measured is every list tried, ascending.
	Measured   []ListRecall `json:"measured"`
	MeasuredAt time.Time    `json:"measured_at"`
}

// ListRecall is the mean recall@10 one candidate list reached.
type ListRecall struct {
	EfSearch int     `json:"ef_search"`
	Recall   float64 `json:"recall"`
}

// CalibrateOptions tune Calibrate; the zero value is the defaults.
type CalibrateOptions struct {
	// Target is the mean recall@10 to reach; 0: DefaultRecallTarget.
	Target float64
	// Queries is how many queries to ask; 0: DefaultCalibrationQueries.
	Queries int
	// QueryVectors are customers' recent query vectors of the model (the
	// query cache's, embed.QueryCache.Recent). With MinQueryVectors or
	// more they are the queries; otherwise sampled clips' own vectors
	// are, which read higher than customers' queries at short lists.
	QueryVectors [][]float32
}

// MinQueryVectors is the fewest recent query vectors a calibration asks
// instead of clips' own vectors.
const MinQueryVectors = 50

// The sources of a calibration's queries.
const (
	SourceQueries = "queries"
	SourceClips   = "clips"
)

// Calibrate measures the recall of the whole-catalog graph on the
// catalog's own vectors of model and stores the candidate list chosen for
// it, which every node's semantic searches then use (efFor). The queries
// are customers' recent ones (o.QueryVectors) when there are
// MinQueryVectors of them, else sampled clips' stored vectors (each clip
// left out of its own answer); their true nearest clips come from an exact
// scan, one statement each, within the statement timeout. The walks are the searches' own: iterative scans off, live
// clips with a ready vector of the model. It runs on the primary: it
// writes, and a replica's exact scans would compete with searches.
func (s *Service) Calibrate(ctx context.Context, model string, o CalibrateOptions) (Calibration, error) {
	target := o.Target
	if target <= 0 {
		target = DefaultRecallTarget
	}
	queries := o.Queries
	if queries <= 0 {
		queries = DefaultCalibrationQueries
	}
	db := s.catalog.Pool()
	type sample struct {
		id  uuid.UUID
		vec pgvector.HalfVector
	}
	var n int
	var rows float64
	if err := db.QueryRow(ctx, sqlCalibrationClips, model, minCalibrationClips).Scan(&n, &rows); err != nil {
		return Calibration{}, fmt.Errorf("search: calibrate: %w", err)
	}
	if n < minCalibrationClips {
		return Calibration{}, ErrTooFewVectors
	}
	// Pages enough for about five times the clips wanted, some of which
	// may be retired or waiting for a vector.
	percent := 100.0
	if rows > 0 {
		percent = min(100, 500*float64(queries)/rows)
	}
	var samples []sample
	source := SourceClips
	if len(o.QueryVectors) >= MinQueryVectors {
		// Customers' own queries: the sample the target means.
		source = SourceQueries
		for _, v := range o.QueryVectors[:min(len(o.QueryVectors), queries)] {
			samples = append(samples, sample{vec: pgvector.NewHalfVector(v)})
		}
	} else {
		var err error
		samples, err = database.Select(ctx, db, func(r pgx.CollectableRow) (sample, error) {
			var sm sample
			return sm, r.Scan(&sm.id, &sm.vec)
		}, sqlCalibrationSample, model, queries, percent)
		if err != nil {
			return Calibration{}, fmt.Errorf("search: calibrate: %w", err)
		}
	}
	if len(samples) == 0 {
		// The sampled pages held no live clip with a vector: nothing to
		// measure, and no recall to divide by zero.
		return Calibration{}, ErrTooFewVectors
	}
	var err error
	exact := make([][]uuid.UUID, len(samples))
	for i, sm := range samples {
		if exact[i], err = s.calibrationWalk(ctx, db, sqlExactScan, nil, sm.vec, sm.id, model); err != nil {
			return Calibration{}, fmt.Errorf("search: calibrate: exact: %w", err)
		}
	}
	c := Calibration{Model: model, Source: source, Target: target, Queries: len(samples)}
	for _, ef := range calibrationListsUpTo(s.efSearch) {
		var sum float64
		for i, sm := range samples {
			got, err := s.calibrationWalk(ctx, db, sqlHNSWSettings,
				[]any{strconv.Itoa(ef), "20000", "force_custom_plan", "off"}, sm.vec, sm.id, model)
			if err != nil {
				return Calibration{}, fmt.Errorf("search: calibrate: walk: %w", err)
			}
			sum += recallOf(got, exact[i])
		}
		r := sum / float64(len(samples))
		c.Measured = append(c.Measured, ListRecall{EfSearch: ef, Recall: r})
		c.EfSearch, c.Recall = ef, r
		if r >= target {
			break
		}
	}
	measured, err := json.Marshal(c.Measured)
	if err != nil {
		return Calibration{}, err
	}
	if err := db.QueryRow(ctx, sqlStoreCalibration, c.Model, c.EfSearch, c.Recall, c.Target, c.Queries, measured, c.Source).
		Scan(&c.MeasuredAt); err != nil {
		return Calibration{}, fmt.Errorf("search: calibrate: store: %w", err)
	}
	s.calibrated.forget(model)
	return c, nil
}

// calibrationListsUpTo are the lists a calibration tries: the ladder up to
// the configured list, which is always the last.
func calibrationListsUpTo(ceiling int) []int {
	var out []int
	for _, ef := range calibrationLists {
		if ef < ceiling {
			out = append(out, ef)
		}
	}
	return append(out, ceiling)
}

// calibrationWalk returns the calibrationK nearest clips to vec (clip id
// left out) after the settings statement, in one round trip as a search's
// page is (nearestPage).
func (s *Service) calibrationWalk(ctx context.Context, db *pgxpool.Pool, settings string, args []any,
	vec pgvector.HalfVector, id uuid.UUID, model string) ([]uuid.UUID, error) {
	batch := &pgx.Batch{}
	batch.Queue(settings, args...)
	batch.Queue(sqlCalibrationNearest, vec, model, id, calibrationK)
	br := db.SendBatch(ctx, batch)
	_, err := br.Exec()
	var ids []uuid.UUID
	if err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			ids, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return ids, err
}

// recallOf is the share of want found in got.
func recallOf(got, want []uuid.UUID) float64 {
	if len(want) == 0 {
		return 1
	}
	hits := 0
	for _, id := range want {
		if slices.Contains(got, id) {
			hits++
		}
	}
	return float64(hits) / float64(len(want))
}

// calibratedLists is a node's copy of the calibrated candidate lists, per
// model, each read again after calibrationTTL.
type calibratedLists struct {
	mu    sync.Mutex
	lists map[string]calibratedList
}

type calibratedList struct {
	ef    int // 0: none stored
	until time.Time
}

func (c *calibratedLists) forget(model string) {
	c.mu.Lock()
	delete(c.lists, model)
	c.mu.Unlock()
}

// efFor is the candidate list semantic searches of model walk with: the
// calibrated one when calibration is on and one is stored, never more than
// the configured list; otherwise the configured list. A failed read (a
// replica still without the table, say) keeps the configured list for
// calibrationTTL too: searches then cost what they did without
// calibration, and not a failing read each.
func (s *Service) efFor(ctx context.Context, db *pgxpool.Pool, model string) int {
	if !s.calibrate {
		return s.efSearch
	}
	now := time.Now()
	s.calibrated.mu.Lock()
	l, ok := s.calibrated.lists[model]
	s.calibrated.mu.Unlock()
	if !ok || now.After(l.until) {
		var ef int
		if err := db.QueryRow(ctx, sqlCalibratedList, model).Scan(&ef); err != nil {
			ef = 0
		}
		l = calibratedList{ef: ef, until: now.Add(calibrationTTL)}
		s.calibrated.mu.Lock()
		if s.calibrated.lists == nil {
			s.calibrated.lists = map[string]calibratedList{}
		}
		s.calibrated.lists[model] = l
		s.calibrated.mu.Unlock()
	}
	if l.ef <= 0 {
		return s.efSearch
	}
	return min(l.ef, s.efSearch)
}

// Calibrations are the calibrations stored, one per model.
func (s *Service) Calibrations(ctx context.Context) ([]Calibration, error) {
	return database.Select(ctx, s.catalog.Pool(), func(r pgx.CollectableRow) (Calibration, error) {
		var c Calibration
		var measured []byte
		if err := r.Scan(&c.Model, &c.Source, &c.EfSearch, &c.Recall, &c.Target, &c.Queries, &measured, &c.MeasuredAt); err != nil {
			return c, err
		}
		return c, json.Unmarshal(measured, &c.Measured)
	}, sqlCalibrations)
}
