-- +goose Up
-- Licences (billing/license): every purchase is a single-user licence with
-- an unguessable id of its own, printed on certificates and looked up by the
-- public verify page. The column's default gives every existing purchase its
-- licence in this statement (a volatile default is evaluated per row), and
-- gives one to a purchase that the previous release's purchase function
-- inserts during a rolling upgrade; the current function passes the id it
-- chose (in_license), so the purchase answer carries it without a read.
ALTER TABLE purchases
    ADD COLUMN license_id text NOT NULL
        DEFAULT ('lic_' || replace(gen_random_uuid()::text, '-', ''))
        CONSTRAINT purchases_license_id_format CHECK (license_id ~ '^lic_[0-9a-f]{32}$'),
    -- An operator's revocation (brollctl license revoke): when and why.
    ADD COLUMN license_revoked_at timestamptz,
    ADD COLUMN license_revoked_reason text
        CONSTRAINT purchases_license_revoked_reason_length
        CHECK (char_length(license_revoked_reason) BETWEEN 1 AND 500),
    ADD CONSTRAINT purchases_license_revoked_with_reason
        CHECK ((license_revoked_at IS NULL) = (license_revoked_reason IS NULL));
CREATE UNIQUE INDEX purchases_license_id_idx ON purchases (license_id);

-- The display name a platform sets per customer key, printed on the key's
-- licences; customer_label (often an email) stays private.
ALTER TABLE api_keys ADD COLUMN licensee_name text
    CONSTRAINT api_keys_licensee_name_length CHECK (char_length(licensee_name) BETWEEN 1 AND 200);

-- +goose Down
ALTER TABLE api_keys DROP COLUMN licensee_name;
DROP INDEX purchases_license_id_idx;
ALTER TABLE purchases DROP CONSTRAINT purchases_license_revoked_with_reason,
    DROP COLUMN license_revoked_reason, DROP COLUMN license_revoked_at, DROP COLUMN license_id;
