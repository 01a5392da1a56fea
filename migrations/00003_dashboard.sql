-- +goose Up
-- People who sign in to the account dashboard. A user belongs to one
-- account and signs in with an email that is unique across the service (the
-- sign-in form asks for nothing else). password_hash is an argon2id PHC
-- string, NULL until the user follows the one-time link an operator hands
-- out (brollctl user create / user reset).
CREATE TABLE dashboard_users (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id        uuid NOT NULL REFERENCES accounts (id),
    email             text NOT NULL UNIQUE
                          CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
    password_hash     text,
    password_set_at   timestamptz,
    last_sign_in_at   timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_users_account_idx ON dashboard_users (account_id, created_at);

-- One-time set-password links. Only a hash of the token is stored, so a
-- copy of this table opens nothing; used_at makes a link single use and
-- issuing a new link retires the older ones of the user.
CREATE TABLE dashboard_password_tokens (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX dashboard_password_tokens_user_idx ON dashboard_password_tokens (user_id);

-- Requests per key and hour, flushed from Redis with the usage counters of
-- api_keys and under the same batch id, so a repeated flush adds nothing.
-- The dashboard sums the last 24 buckets of an account's keys.
CREATE TABLE usage_hourly (
    api_key_id uuid NOT NULL REFERENCES api_keys (id),
    hour       timestamptz NOT NULL CHECK (extract(epoch FROM hour)::bigint % 3600 = 0),
    requests   bigint NOT NULL CHECK (requests >= 0),
    PRIMARY KEY (api_key_id, hour)
);

-- +goose Down
DROP TABLE usage_hourly;
DROP TABLE dashboard_password_tokens;
DROP TABLE dashboard_users;
