package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"broll/catalog/search"
)

// calibrateSearch calibrates semantic search's candidate list for the
// embedder's model every CalibrateInterval until ctx ends, the first at
// once (search.Service.Calibrate), on customers' recent queries when the
// query cache holds enough of them: the API nodes read the choice within a
// minute. A catalog with too few vectors keeps the configured list and is
// not an error. Each calibration is logged with what it chose.
func (w *Worker) calibrateSearch(ctx context.Context) {
	model := w.embedder.Model()
	w.sweepEvery(ctx, sweep{name: "search calibration", every: w.opts.CalibrateInterval,
		run: func(ctx context.Context, _ time.Time) (int, error) {
			o := search.CalibrateOptions{Target: w.opts.RecallTarget}
			if w.recentQueries != nil {
				// Too few (or a Redis in trouble) falls back to clips'
				// own vectors.
				o.QueryVectors, _ = w.recentQueries.Recent(ctx, search.DefaultCalibrationQueries)
			}
			c, err := w.search.Calibrate(ctx, model, o)
			if errors.Is(err, search.ErrTooFewVectors) {
				return 0, nil
			}
			if err != nil {
				return 0, err
			}
			w.logger.Info("semantic search calibrated", "model", c.Model, "source", c.Source, "ef_search", c.EfSearch,
				"recall", c.Recall, "target", c.Target, "queries", c.Queries)
			return 0, nil
		}, level: slog.LevelInfo})
}
