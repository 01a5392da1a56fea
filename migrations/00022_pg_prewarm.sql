-- +goose Up
-- pg_prewarm (a contrib module that ships with Postgres) lets an API node
-- load the catalog's graphs and rows into shared buffers in one sequential
-- pass before it takes traffic, instead of one random page at a time under
-- load (catalog.Service.Warm; docs/performance.md has both measured). It
-- is optional: a server without the module, or a role that may not create
-- it, keeps migrating, and its nodes warm up with searches alone. An
-- operator can create it later (CREATE EXTENSION pg_prewarm) without a
-- release.
-- +goose StatementBegin
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_prewarm;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_prewarm not installed (% %): API nodes warm up with searches alone', SQLSTATE, SQLERRM;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP EXTENSION IF EXISTS pg_prewarm;
