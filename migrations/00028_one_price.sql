-- +goose Up
-- A tier's clips are repriced by a trigger on tiers in the transaction
-- that changes the price, whichever code writes it, rather than by a
-- statement the Go code had to remember. The trigger's function is
-- migrations/functions/clip_price.sql, which every migrate puts in place;
-- this is its first form, which the trigger needs to exist.
-- +goose StatementBegin
CREATE FUNCTION broll_tier_reprice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE videos SET price_cents = NEW.price_cents
    WHERE difficulty = NEW.name AND price_cents IS DISTINCT FROM NEW.price_cents;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER tiers_reprice AFTER INSERT OR UPDATE OF price_cents ON tiers
    FOR EACH ROW EXECUTE FUNCTION broll_tier_reprice();

-- +goose Down
DROP TRIGGER tiers_reprice ON tiers;
DROP FUNCTION broll_tier_reprice();
