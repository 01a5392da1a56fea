-- +goose Up
-- Stamped copies (billing/license, stamp.go): the full-quality file of a
-- live purchase remuxed (no re-encode) with its licence id and verify URL
-- in the container's metadata, stored beside the original in the media
-- store. One row per purchase whose stamp was made, or found impossible:
-- no row means not made yet, and the download serves the original while
-- the worker makes it. source_key is the original the row was made from: a
-- clip whose file was replaced since has a stale row, treated as no row.
CREATE TABLE license_stamps (
    purchase_id uuid PRIMARY KEY REFERENCES purchases (id) ON DELETE CASCADE,
    source_key  text NOT NULL,
    -- The stamped copy's key and size; NULL when the container cannot carry
    -- the licence (a GIF, a JPEG), which reason says: the original is served.
    media_key   text,
    bytes       bigint CONSTRAINT license_stamps_bytes_positive CHECK (bytes > 0),
    reason      text CONSTRAINT license_stamps_reason_length CHECK (char_length(reason) BETWEEN 1 AND 500),
    stamped_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT license_stamps_copy_or_reason
        CHECK ((media_key IS NULL) = (bytes IS NULL) AND (media_key IS NULL) = (reason IS NOT NULL))
);
-- brollctl license prune-stamped walks the oldest stamps first.
CREATE INDEX license_stamps_stamped_at_idx ON license_stamps (stamped_at);

-- +goose Down
DROP TABLE license_stamps;
