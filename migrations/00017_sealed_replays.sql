-- +goose Up
-- Idempotent replays are kept sealed from now on (AES-GCM under a key
-- derived from BROLL_SIGNING_KEY, bound to the row): an answer to
-- POST /api/v1/keys holds the new key, a purchase's answer signed download
-- links. Answers stored before in plaintext cannot be sealed here (the
-- server secret never reaches the database), so they are invalidated: the
-- body is dropped and the status kept, which is how the store marks an
-- answer it did not keep. A retry of such a request within its 24 hours is
-- not run again; it gets 409 conflict saying the answer was not kept.
--
-- The other secrets need nothing here: API keys, set-password links and
-- dashboard sessions were already stored as hashes only.
UPDATE idempotency_keys SET body = NULL
WHERE body IS NOT NULL AND substring(body FROM 1 FOR 10) <> convert_to('sealed:v1:', 'UTF8');

-- +goose Down
-- Nothing to restore: the dropped answers are gone, and sealed ones stay
-- readable only by a server that has the key.
SELECT 1;
