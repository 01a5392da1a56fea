package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"broll/catalog/search"
	"broll/wiring"
)

// searchCalibrate calibrates semantic search's candidate list for the
// configured embedder's model now, as a worker does every
// BROLL_SEMANTIC_CALIBRATE_INTERVAL, and prints what it measured and
// chose: every list tried with its recall@10 on the catalog's own vectors.
func (c *cli) searchCalibrate(f *flags) action {
	target := f.Float64("target", 0, "mean recall@10 to reach (default BROLL_SEMANTIC_RECALL_TARGET, or 0.95 when that is 0)")
	queries := f.Int("queries", search.DefaultCalibrationQueries, "queries to ask: customers' recent ones when the query cache holds 50 or more, else sampled clips' own vectors")
	return func(ctx context.Context) (any, error) {
		if !(*target >= 0 && *target <= 1) {
			return nil, usageErr("--target %v is not between 0 and 1", *target)
		}
		if *queries < 1 || *queries > 10_000 {
			return nil, usageErr("--queries %d is not from 1 to 10000", *queries)
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			t := *target
			if t == 0 {
				t = e.cfg.SemanticRecallTarget
			}
			o := search.CalibrateOptions{Target: t, Queries: *queries}
			// Customers' recent queries when the query cache holds enough,
			// as a worker calibrates.
			emb, err := wiring.SelectEmbedder(ctx, e.cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				return nil, err
			}
			o.QueryVectors, _ = wiring.NewQueryCache(e.cfg, emb, e.rdb).Recent(ctx, *queries)
			cal, err := e.search.Calibrate(ctx, emb.Model(), o)
			if errors.Is(err, search.ErrTooFewVectors) {
				return nil, fmt.Errorf("%w: at least 1,000 clips need a ready vector of the model; searches keep BROLL_SEMANTIC_EF_SEARCH", err)
			}
			return cal, err
		})
	}
}

// searchCalibrations prints the stored calibrations, one per model.
func (c *cli) searchCalibrations(*flags) action {
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		cals, err := e.search.Calibrations(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"calibrations": cals, "recall_target": e.cfg.SemanticRecallTarget,
			"max_ef_search": e.cfg.SemanticEfSearch}, nil
	})
}
