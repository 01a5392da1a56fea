-- +goose Up
-- What a clip's line said beside what its file is. The probe's figures are
-- what a clip shows (width, height, duration_seconds, fps, orientation):
-- a buyer gets the file, so the file's truth is what the catalog lists.
-- listed_media keeps the line's own figures (NULL until the probe has run:
-- until then the clip's columns still hold them), and probe_mismatches the
-- figures on which the two disagree (NULL: none), for `brollctl clips
-- status` and the ops API, so that content ops can correct the line.
-- media_trailing_bytes counts the bytes after the file's last box that the
-- probe tolerated (NULL: none).
ALTER TABLE videos
    ADD COLUMN listed_media jsonb,
    ADD COLUMN probe_mismatches jsonb,
    ADD COLUMN media_trailing_bytes bigint;

-- Clips listed by status (a handful among many).
CREATE INDEX videos_probe_mismatches ON videos (media_processed_at DESC, id)
    WHERE probe_mismatches IS NOT NULL;
CREATE INDEX videos_trailing_bytes ON videos (media_processed_at DESC, id)
    WHERE media_trailing_bytes IS NOT NULL;

-- Stored clips read again by `brollctl clips reprobe`: a job of kind
-- reprobe per clip (job_outbox), and here each clip's last run and what
-- it found, for the command to report.
ALTER TABLE job_outbox DROP CONSTRAINT job_outbox_kind_check;
ALTER TABLE job_outbox ADD CONSTRAINT job_outbox_kind_check
    CHECK (kind IN ('embed', 'media', 'previews', 'reprobe'));

CREATE TABLE media_reprobes (
    video_id  uuid PRIMARY KEY REFERENCES videos (id) ON DELETE CASCADE,
    run_id    uuid NOT NULL,
    queued_at timestamptz NOT NULL DEFAULT now(),
    done_at   timestamptz,
    -- unchanged, changed, refused, skipped or error
    outcome   text,
    changes   jsonb,
    reason    text
);
CREATE INDEX media_reprobes_run ON media_reprobes (run_id, video_id);

-- +goose Down
DROP TABLE media_reprobes;
DELETE FROM job_outbox WHERE kind = 'reprobe';
ALTER TABLE job_outbox DROP CONSTRAINT job_outbox_kind_check;
ALTER TABLE job_outbox ADD CONSTRAINT job_outbox_kind_check
    CHECK (kind IN ('embed', 'media', 'previews'));
ALTER TABLE videos
    DROP COLUMN listed_media,
    DROP COLUMN probe_mismatches,
    DROP COLUMN media_trailing_bytes;
