-- +goose Up
-- A clip goes on sale as soon as its file passed the probe; the preview and
-- thumbnail it lacks follow as a job of their own (catalog/jobs.go), made
-- by workers apart from the probing, so that ffmpeg encoding never holds up
-- an import's clips from being searchable.
ALTER TABLE job_outbox DROP CONSTRAINT job_outbox_kind_check;
ALTER TABLE job_outbox ADD CONSTRAINT job_outbox_kind_check
    CHECK (kind IN ('embed', 'media', 'previews'));

-- +goose Down
DELETE FROM job_outbox WHERE kind = 'previews';
ALTER TABLE job_outbox DROP CONSTRAINT job_outbox_kind_check;
ALTER TABLE job_outbox ADD CONSTRAINT job_outbox_kind_check
    CHECK (kind IN ('embed', 'media'));
