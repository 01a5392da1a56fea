package worker

import (
	"context"
	"log/slog"
	"time"
)

// sweep is a periodic task of the worker (the licence stamps' and the
// collections' sweeps): run every every, the first at once, until ctx
// ends; it returns how many things it handled. A failure is logged once
// until a run works again; a working run that handled some is logged at
// level, with the count under field.
type sweep struct {
	name  string
	every time.Duration
	run   func(ctx context.Context, now time.Time) (int, error)
	// done is what a working run that handled some says, at level.
	done  string
	level slog.Level
	field string
}

func (w *Worker) sweepEvery(ctx context.Context, s sweep) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	failing := false
	for {
		n, err := s.run(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			w.logger.Warn(s.name+" failed; the next one tries again", "err", err)
			failing = true
		case err == nil:
			if failing {
				w.logger.Info(s.name+" works again", s.field, n)
			} else if n > 0 {
				w.logger.Log(ctx, s.level, s.done, s.field, n)
			}
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
