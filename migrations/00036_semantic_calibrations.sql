-- +goose Up
-- The HNSW candidate list (hnsw.ef_search) that semantic search needs for
-- a given recall depends on how the model's vectors lie, which no fixed
-- default can know: the built-in embedder's vectors reach recall@10 0.999
-- at 40 candidates on the benchmark's catalog where drawn low-rank vectors
-- reach 0.81 at 120. The worker measures it on the catalog's own vectors
-- (catalog/search/calibrate.go) and keeps, per model, the smallest list
-- that reached the recall target; every API node reads it from here.
CREATE TABLE semantic_calibrations (
    model       text PRIMARY KEY,
    ef_search   integer NOT NULL CHECK (ef_search BETWEEN 1 AND 1000),
    -- recall is the mean recall@10 measured at ef_search, target the one
    -- it was chosen for, queries how many clips' vectors were asked.
    recall      double precision NOT NULL CHECK (recall BETWEEN 0 AND 1),
    target      double precision NOT NULL CHECK (target BETWEEN 0 AND 1),
    queries     integer NOT NULL CHECK (queries > 0),
    -- measured is every list tried, ascending, with its recall:
    -- [{"ef_search": 20, "recall": 0.93}, ...].
    measured    jsonb NOT NULL,
    measured_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE semantic_calibrations;
