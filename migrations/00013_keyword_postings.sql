-- +goose Up
-- Keyword search ranked without reading every match. The full-text GIN
-- index can only hand back all the clips a word is in, as a bitmap in table
-- order, so ranking a common word read and ranked thousands of rows to show
-- twenty. video_terms holds one row per (word, clip) with the word's impact
-- in that clip, indexed so that a word's clips come out best first: a
-- search walks the first few dozen of each word and stops (catalog,
-- keywordWalkSQL). Triggers keep it in the same transaction as the clip.
--
-- impact is the word's own ts_rank in the clip (from where it appears:
-- title, tags, description, the rest), so a one-word search's best clips
-- by impact are its best by rank, and a longer search walks each word's
-- best first. lexeme is in C collation so that a prefix is a range of the
-- index. There is no foreign key: clips are
-- retired, never deleted, and a key check per word would slow every import.
CREATE TABLE video_terms (
    lexeme   text COLLATE "C" NOT NULL,
    impact   real NOT NULL,
    video_id uuid NOT NULL
);

CREATE FUNCTION broll_term_impact(doc tsvector, lexeme text) RETURNS real
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ts_rank(doc, quote_literal(lexeme)::tsquery);

-- New clips come in bulk (an import is one INSERT of thousands of rows), so
-- their words are added once per statement from its transition table. An
-- update changes one clip's words at a time, and most updates of a clip
-- (its vector, its media) leave them alone, so it is a row trigger that
-- fires only when they change: it deletes the old rows by their whole key
-- (lexeme, impact, id), each a point in the index, and adds the new ones.
-- +goose StatementBegin
CREATE FUNCTION broll_video_terms_added() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO video_terms (lexeme, impact, video_id)
    SELECT u.lexeme, broll_term_impact(n.search_tsv, u.lexeme), n.id FROM added n, unnest(n.search_tsv) u;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION broll_video_terms_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM video_terms t
    USING unnest(OLD.search_tsv) u
    WHERE t.lexeme = u.lexeme AND t.impact = broll_term_impact(OLD.search_tsv, u.lexeme) AND t.video_id = OLD.id;
    INSERT INTO video_terms (lexeme, impact, video_id)
    SELECT u.lexeme, broll_term_impact(NEW.search_tsv, u.lexeme), NEW.id FROM unnest(NEW.search_tsv) u;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- The triggers come first: creating them locks out writes to videos until
-- this migration commits, so no clip is added between the copy below and
-- the triggers.
CREATE TRIGGER videos_terms_insert AFTER INSERT ON videos
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION broll_video_terms_added();
CREATE TRIGGER videos_terms_update AFTER UPDATE ON videos
    FOR EACH ROW WHEN (OLD.search_tsv IS DISTINCT FROM NEW.search_tsv)
    EXECUTE FUNCTION broll_video_terms_changed();

INSERT INTO video_terms (lexeme, impact, video_id)
SELECT u.lexeme, broll_term_impact(v.search_tsv, u.lexeme), v.id FROM videos v, unnest(v.search_tsv) u;

CREATE INDEX video_terms_walk ON video_terms (lexeme, impact, video_id);


-- +goose Down
DROP TRIGGER videos_terms_update ON videos;
DROP TRIGGER videos_terms_insert ON videos;
DROP FUNCTION broll_video_terms_changed();
DROP FUNCTION broll_video_terms_added();
DROP TABLE video_terms;
DROP FUNCTION broll_term_impact(tsvector, text);
