-- +goose Up
-- Uploads: an ops key asks for a place to put a file (a presigned PUT with
-- the s3 store, an API-served PUT with local), then imports a clip naming
-- the upload instead of a file path. The object stays where it was put;
-- video_id is the clip that took it (one clip per upload).
CREATE TABLE media_uploads (
    id           uuid PRIMARY KEY,
    api_key_id   uuid REFERENCES api_keys(id) ON DELETE SET NULL,
    filename     text NOT NULL,
    content_type text NOT NULL,
    size         bigint NOT NULL CHECK (size > 0),
    media_key    text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    received_at  timestamptz,
    video_id     uuid REFERENCES videos(id) ON DELETE SET NULL
);

-- Media processing: every imported full-quality file is probed by the
-- worker (figures the line left out are filled from it, a preview and a
-- thumbnail made when none was given). Clips from before this migration
-- were imported with their figures typed in: they are ready.
ALTER TABLE videos
    ADD COLUMN media_status text NOT NULL DEFAULT 'ready'
        CHECK (media_status IN ('pending', 'ready', 'failed')),
    ADD COLUMN media_error text,
    ADD COLUMN media_processed_at timestamptz;
CREATE INDEX videos_media_pending_idx ON videos (media_status) WHERE media_status <> 'ready';

-- +goose Down
DROP INDEX videos_media_pending_idx;
ALTER TABLE videos DROP COLUMN media_status, DROP COLUMN media_error, DROP COLUMN media_processed_at;
DROP TABLE media_uploads;
