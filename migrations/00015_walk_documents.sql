-- +goose Up
-- A keyword search's walk (catalog, keywordWalkSQL) checks every clip it
-- passes against the whole query, and keeps about one in seven on a common
-- pair of words. Each check read the clip's row from videos: an index
-- probe and a heap fetch per clip passed, half of a two-word search's time
-- in Postgres. Each posting now carries its clip's words (doc: the clip's
-- search_tsv stripped of positions and weights, all a match needs), and
-- the walk index holds them too, so a walk checks a clip without leaving
-- the index. It costs the postings about twice their size.
--
-- Retired clips' postings go, so that the walk needs no look at videos to
-- leave them out; retiring is final (re-importing a retired clip does not
-- revive it), so a retired clip's postings never come back.
--
-- The table is rebuilt beside the old one while videos is locked against
-- writes (SHARE: searches and other reads go on), so that no clip changes
-- between the copy and the new triggers.
LOCK TABLE videos IN SHARE MODE;

CREATE TABLE video_terms_next (
    lexeme   text COLLATE "C" NOT NULL,
    impact   real NOT NULL,
    video_id uuid NOT NULL,
    doc      tsvector NOT NULL
);
INSERT INTO video_terms_next (lexeme, impact, video_id, doc)
SELECT t.lexeme, t.impact, t.video_id, strip(v.search_tsv)
FROM video_terms t JOIN videos v ON v.id = t.video_id AND v.retired_at IS NULL;
DROP TABLE video_terms;
ALTER TABLE video_terms_next RENAME TO video_terms;
CREATE INDEX video_terms_walk ON video_terms (lexeme, impact, video_id) INCLUDE (doc);
ANALYZE video_terms;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION broll_video_terms_added() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO video_terms (lexeme, impact, video_id, doc)
    SELECT u.lexeme, broll_term_impact(n.search_tsv, u.lexeme), n.id, strip(n.search_tsv)
    FROM added n, unnest(n.search_tsv) u
    WHERE n.retired_at IS NULL;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION broll_video_terms_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.retired_at IS NULL THEN
        DELETE FROM video_terms t
        USING unnest(OLD.search_tsv) u
        WHERE t.lexeme = u.lexeme AND t.impact = broll_term_impact(OLD.search_tsv, u.lexeme) AND t.video_id = OLD.id;
    END IF;
    IF NEW.retired_at IS NULL THEN
        INSERT INTO video_terms (lexeme, impact, video_id, doc)
        SELECT u.lexeme, broll_term_impact(NEW.search_tsv, u.lexeme), NEW.id, strip(NEW.search_tsv)
        FROM unnest(NEW.search_tsv) u;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

DROP TRIGGER videos_terms_update ON videos;
CREATE TRIGGER videos_terms_update AFTER UPDATE ON videos
    FOR EACH ROW WHEN (OLD.search_tsv IS DISTINCT FROM NEW.search_tsv OR OLD.retired_at IS DISTINCT FROM NEW.retired_at)
    EXECUTE FUNCTION broll_video_terms_changed();


-- +goose Down
LOCK TABLE videos IN SHARE MODE;

DROP TRIGGER videos_terms_update ON videos;
CREATE TRIGGER videos_terms_update AFTER UPDATE ON videos
    FOR EACH ROW WHEN (OLD.search_tsv IS DISTINCT FROM NEW.search_tsv)
    EXECUTE FUNCTION broll_video_terms_changed();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION broll_video_terms_added() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO video_terms (lexeme, impact, video_id)
    SELECT u.lexeme, broll_term_impact(n.search_tsv, u.lexeme), n.id FROM added n, unnest(n.search_tsv) u;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION broll_video_terms_changed() RETURNS trigger
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

DROP INDEX video_terms_walk;
ALTER TABLE video_terms DROP COLUMN doc;
INSERT INTO video_terms (lexeme, impact, video_id)
SELECT u.lexeme, broll_term_impact(v.search_tsv, u.lexeme), v.id
FROM videos v, unnest(v.search_tsv) u WHERE v.retired_at IS NOT NULL;
CREATE INDEX video_terms_walk ON video_terms (lexeme, impact, video_id);
