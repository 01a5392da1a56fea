package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"broll/catalog/mediajobs"
	"broll/internal/apperr"
)

// reprobePoll is how often `clips reprobe --wait` reads the run's report.
const reprobePoll = time.Second

// clipsReprobe reads stored clips' files again (after a change of the
// probe): all clips, one (--id) or those probed since a time (--since). It
// prints the run at once ({"run_id", "queued"}); --wait waits for the
// workers and prints the run's report instead, and --run RUN_ID prints
// the report of an earlier run as it stands.
func (c *cli) clipsReprobe(f *flags) action {
	id := f.String("id", "", "only this clip (a UUID)")
	since := f.String("since", "", "only clips probed since: RFC 3339 time, YYYY-MM-DD or a period (30d, 12h)")
	wait := f.Bool("wait", false, "wait for the workers and print the run's report")
	timeout := f.Duration("timeout", time.Hour, "with --wait, how long to wait")
	run := f.String("run", "", "print the report of run RUN_ID as it stands")
	return func(ctx context.Context) (any, error) {
		if *run != "" {
			if *id != "" || *since != "" || *wait {
				return nil, usageErr("clips reprobe --run takes no other flag")
			}
			runID, err := uuid.Parse(*run)
			if err != nil {
				return nil, apperr.InvalidField("run", "--run %q is not a UUID", apperr.Clip(*run))
			}
			return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
				return e.mediaJobs.ReprobeReport(ctx, runID)
			})
		}
		var filter mediajobs.ReprobeFilter
		if *id != "" && *since != "" {
			return nil, usageErr("clips reprobe takes --id or --since, not both")
		}
		if *id != "" {
			v, err := uuid.Parse(*id)
			if err != nil {
				return nil, apperr.InvalidField("id", "--id %q is not a UUID", apperr.Clip(*id))
			}
			filter.ID = &v
		}
		if *since != "" {
			t, err := time.Parse(time.RFC3339, *since)
			if err != nil {
				if t, err = parseSince(*since, time.Now()); err != nil {
					return nil, err
				}
			}
			filter.Since = &t
		}
		if *timeout <= 0 {
			return nil, apperr.InvalidField("timeout", "--timeout must be positive")
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			queued, err := e.mediaJobs.Reprobe(ctx, filter)
			if err != nil || !*wait {
				return queued, err
			}
			if queued.Queued == 0 {
				return mediajobs.ReprobeReport{RunID: queued.RunID, Changed: []mediajobs.ReprobedClip{},
					Refused: []mediajobs.ReprobedClip{}, Errors: []mediajobs.ReprobedClip{}}, nil
			}
			return c.waitReprobe(ctx, e, queued, *timeout)
		})
	}
}

// waitReprobe polls the run's progress until no clip of it is pending,
// then reads its report.
func (c *cli) waitReprobe(ctx context.Context, e *env, run mediajobs.ReprobeQueued, timeout time.Duration) (any, error) {
	progress := c.progress("reprobe", "clips")
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(reprobePoll)
	defer tick.Stop()
	for {
		queued, done, err := e.mediaJobs.ReprobeProgress(ctx, run.RunID)
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(done, queued)
		}
		if done == queued {
			return e.mediaJobs.ReprobeReport(ctx, run.RunID)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("reprobe run %s: %d of %d clips still pending after %v (is a worker running?); "+
				"`brollctl clips reprobe --run %s` shows the report", run.RunID, queued-done, queued, timeout, run.RunID)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
