-- The price of a clip is its tier's: tiers.price_cents is where a price is
-- set (catalog.SetTier, brollctl tiers set, the dashboard), and the copy on
-- each clip row, videos.price_cents, is what every reader uses: the lists
-- (which sort and filter on it from their indexes), the clip read, and the
-- purchase statement (broll_purchase_batch), which charges what the clip
-- shows. These two trigger functions are the only writers of the copy, so
-- the rule is stated here once:
--   - broll_video_price (trigger videos_price, migration 00005) gives a new
--     clip, or a clip whose tier changes, its tier's price; FOR SHARE waits
--     for a tier change in progress to commit, so the clip gets the new one;
--   - broll_tier_reprice (trigger tiers_reprice, migration 00028) gives the
--     clips of a tier its new price in the transaction that changes it.
-- Past purchases keep what they paid (purchases.price_cents).
CREATE OR REPLACE FUNCTION broll_video_price() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    SELECT t.price_cents INTO NEW.price_cents FROM tiers t WHERE t.name = NEW.difficulty FOR SHARE;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION broll_tier_reprice() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE videos SET price_cents = NEW.price_cents
    WHERE difficulty = NEW.name AND price_cents IS DISTINCT FROM NEW.price_cents;
    RETURN NULL;
END;
$$;
