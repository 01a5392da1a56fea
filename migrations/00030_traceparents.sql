-- +goose Up
-- Work written for a request continues the request's trace wherever it
-- runs: an event keeps the request's whole W3C traceparent (the parent
-- span of its deliveries), no longer its trace id alone, which rows of
-- earlier releases keep; a job keeps the traceparent of the span that
-- recorded it, which its task carries to the worker.
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_trace_id_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_trace_id_check
    CHECK (trace_id ~ '^[0-9a-f]{32}$' OR trace_id ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
ALTER TABLE job_outbox ADD COLUMN traceparent text
    CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');

-- +goose Down
ALTER TABLE job_outbox DROP COLUMN traceparent;
UPDATE webhook_events SET trace_id = substr(trace_id, 4, 32) WHERE length(trace_id) > 32;
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_trace_id_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_trace_id_check
    CHECK (trace_id ~ '^[0-9a-f]{32}$');
