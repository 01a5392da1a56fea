-- +goose Up
-- The W3C trace id of the request that wrote an event (NULL when the
-- request carried no traceparent, or no request wrote it): each delivery of
-- the event sends a traceparent with it, so a receiver's logs join the
-- caller's trace.
ALTER TABLE webhook_events ADD COLUMN trace_id text
    CHECK (trace_id ~ '^[0-9a-f]{32}$');

-- +goose Down
ALTER TABLE webhook_events DROP COLUMN trace_id;
