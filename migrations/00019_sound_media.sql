-- +goose Up
-- A clip is listed, shown and sold only once its full-quality file passed
-- the probe. Every customer read (lists, keyword postings, the semantic
-- graphs, filter counts, details) and the purchase statement already leave
-- out clips with retired_at set, through the partial indexes' own
-- predicate (retired_at IS NULL). A clip whose media is not known sound is
-- kept out the same way: its retired_at is 'infinity', "not live yet",
-- which no real retirement (now()) ever writes. The probe's success sets
-- it back to NULL; a real retirement overwrites it with the time, so a
-- retired clip stays retired whatever its probe says. No index changes.
--
-- Clips whose media already passed the probe, and clips from before media
-- processing (00011 marked them ready: their figures were typed in and
-- they were on sale), stay live. Clips still pending or failed leave the
-- catalog until the worker's probe passes them.
UPDATE videos SET retired_at = 'infinity'
WHERE retired_at IS NULL AND media_status <> 'ready';

-- The rule in the schema: nothing live whose media is not sound. Checked
-- under a brief lock after the rows above were set.
ALTER TABLE videos ADD CONSTRAINT videos_live_media_sound
    CHECK (retired_at IS NOT NULL OR media_status = 'ready') NOT VALID;
ALTER TABLE videos VALIDATE CONSTRAINT videos_live_media_sound;

-- Work that is never half-applied: a change that needs the worker records
-- its jobs here in its own transaction (catalog/jobs.go); the writer hands
-- them to asynq after its commit, and the worker's relay moves whatever is
-- left (Redis was away) once Redis answers again.
CREATE TABLE job_outbox (
    id         bigserial PRIMARY KEY,
    kind       text NOT NULL CHECK (kind IN ('embed', 'media')),
    video_id   uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- `clips reembed --all` keeps every vector serving semantic search and
-- marks it stale: the worker makes it again and the new one replaces it.
ALTER TABLE videos ADD COLUMN embedding_stale boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE videos DROP COLUMN embedding_stale;
DROP TABLE job_outbox;
ALTER TABLE videos DROP CONSTRAINT videos_live_media_sound;
UPDATE videos SET retired_at = NULL WHERE retired_at = 'infinity';
