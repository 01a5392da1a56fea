-- +goose Up
-- A calibration asks customers' recent query vectors (the query cache)
-- when there are enough of them, and sampled clips' own vectors otherwise;
-- which it asked is kept beside what it chose.
ALTER TABLE semantic_calibrations
    ADD COLUMN source text NOT NULL DEFAULT 'clips' CHECK (source IN ('queries', 'clips'));

-- +goose Down
ALTER TABLE semantic_calibrations DROP COLUMN source;
