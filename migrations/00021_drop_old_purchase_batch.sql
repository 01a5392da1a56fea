-- +goose Up
-- The purchase function's form from before test mode took eight arguments.
-- migrations/functions/purchase_batch.sql is applied with CREATE OR
-- REPLACE, which leaves a form with other arguments in place beside the
-- current one, so a database migrated by a release before test mode would
-- keep it for good. It is dropped here, once; the function file then
-- (re)creates the current form, as after every migration. A database that
-- never had it drops nothing.
DROP FUNCTION IF EXISTS broll_purchase_batch(uuid, uuid[], text[], bigint[], boolean[], int[], uuid[], uuid[]);

-- +goose Down
-- Nothing to restore: no release that runs this schema calls the old form.
SELECT 1;
