-- +goose Up
-- bytes_sent is what a fetch was to send (the response's length, written
-- when the fetch starts); bytes_delivered is what actually left for the
-- client, written when the stream ends, so an audit can tell a complete
-- download from one broken off. NULL: the stream never reported (the node
-- stopped mid-transfer).
ALTER TABLE download_log ADD COLUMN bytes_delivered bigint;
COMMENT ON COLUMN download_log.bytes_sent IS 'bytes the response was to carry (its Content-Length)';
COMMENT ON COLUMN download_log.bytes_delivered IS 'bytes handed to the client connection before the stream ended; NULL if it never ended';

-- +goose Down
ALTER TABLE download_log DROP COLUMN bytes_delivered;
