-- Who owns a clip, in one place. A key owns a clip once it bought it (live
-- or test), through the one purchases row of that key and clip, and keeps
-- it whatever becomes of the clip (retired, re-imported with a new file).
-- A legacy (v0) buyer has no key: it owns, within its account, the clips
-- bought under its customer email. Every reader of ownership goes through
-- these two functions: the purchase statement (broll_purchase_batch, which
-- answers an owned clip as already owned and charges nothing), and the
-- catalog's statements (catalog/owned.go: the clip read, `owned` and
-- `download_url` of every clip a key sees, search's owned filter). Both are
-- a single SELECT, STABLE, so the planner inlines them where they are read
-- from FROM, and they use the purchases' unique indexes as before.
CREATE OR REPLACE FUNCTION broll_owned_purchase(key uuid, video uuid) RETURNS SETOF purchases
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT * FROM purchases p WHERE p.api_key_id = key AND p.video_id = video
$$;

CREATE OR REPLACE FUNCTION broll_legacy_owned_purchase(account uuid, email text, video uuid) RETURNS SETOF purchases
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT * FROM purchases p
    WHERE p.legacy AND p.account_id = account AND coalesce(p.customer_email, '') = email AND p.video_id = video
$$;
