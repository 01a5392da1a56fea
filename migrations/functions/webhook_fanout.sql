-- broll_webhook_fanout: the trigger function of webhook_events (the trigger
-- is made by 00010_webhooks.sql) that gives an event its deliveries, in the
-- writer's own transaction: whoever writes an event (a purchase, a key
-- change, the worker) needs to know nothing of endpoints, and an event that
-- rolls back takes its deliveries with it.
--
-- Who receives what follows the key family (broll_key_family, the relation
-- the purchases visibility rule of billing/visible uses too):
--   - an event about a key (its data names one in key.id: purchase.completed,
--     key.created, key.revoked, spend_limit.reached, license.revoked) goes
--     only to the endpoints of the root key whose family holds that key (a
--     root key is in its own), never to a sibling root key's of the same
--     account; a test key's events go there too, marked livemode false
--     (a test key behaves like a live key, webhooks included);
--   - an event of the account that names no key (balance.low, about the
--     shared pool; a legacy purchase, which every root key sees) goes to
--     every subscribed endpoint of the account;
--   - an event of the whole service (account_id NULL: clips.embedded) goes
--     to every subscribed endpoint;
--   - a 'ping' is addressed to one endpoint by the code that writes it.
-- An event naming a key that is not the account's reaches nobody.
CREATE OR REPLACE FUNCTION broll_webhook_fanout() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    subject uuid;
BEGIN
    IF NEW.type = 'ping' THEN
        RETURN NULL;
    END IF;
    IF NEW.account_id IS NOT NULL AND jsonb_typeof(NEW.data -> 'key') = 'object' THEN
        SELECT k.id INTO subject FROM api_keys k
        WHERE k.id = (NEW.data -> 'key' ->> 'id')::uuid AND k.account_id = NEW.account_id;
        IF subject IS NULL THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO webhook_deliveries (endpoint_id, event_id)
    SELECT e.id, NEW.id FROM webhook_endpoints e
    WHERE e.enabled AND NEW.type = ANY (e.events)
      AND (NEW.account_id IS NULL OR e.account_id = NEW.account_id)
      AND (subject IS NULL OR subject IN (SELECT f.id FROM broll_key_family(e.root_key_id) f(id)));
    RETURN NULL;
END;
$$;
