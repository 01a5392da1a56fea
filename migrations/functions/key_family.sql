-- broll_key_family: the keys root key $1 answers for, itself and its
-- customer keys (live and test): whose purchases it may see (with the
-- rest of the rule in billing/visible), whose collections it reads
-- (collections/visible.go), which keys it may narrow a listing to, and
-- whose events reach its webhook endpoints (broll_webhook_fanout).
-- A customer key's family is itself alone. It is a single SELECT, STABLE,
-- so the planner inlines it where it is read from FROM.
CREATE OR REPLACE FUNCTION broll_key_family(root uuid) RETURNS TABLE (id uuid)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT k.id FROM api_keys k WHERE k.id = root OR k.parent_id = root
$$;
