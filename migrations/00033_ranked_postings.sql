-- +goose Up
-- A keyword search's walk (catalog, keywordWalkSQL) ranked its candidates
-- by ts_rank over each clip's search_tsv in videos. Since the rows hold
-- their halfvecs (00031), a row is past the size at which Postgres moves
-- its largest values out of line, and search_tsv went to TOAST: ranking a
-- candidate cost an index probe and a heap fetch of videos, then a probe
-- and a fetch of the TOAST table, about half of a two-word search's time
-- in Postgres (docs/performance.md, "Keyword postings that rank").
--
-- Each posting's doc now is its clip's whole search_tsv, with the
-- positions and weights ts_rank reads (00015 kept it stripped, which is
-- all a match needs), so the walk ranks the clips it keeps from the
-- postings it has already read, and reads videos only for the page. A
-- match is the same on either form of the document. The postings grow by
-- about a third (35 bytes each on the benchmark's catalog).
--
-- The release before reads doc only to match, so it runs on either form.
-- As in 00015, the table is rebuilt beside the old one while videos is
-- locked against writes (SHARE: searches and other reads go on), so that
-- no clip changes between the copy and the new triggers: 4 s at 100,000
-- clips, 47 s at 1,000,000 on two cores.
LOCK TABLE videos IN SHARE MODE;

CREATE TABLE video_terms_next (
    lexeme   text COLLATE "C" NOT NULL,
    impact   real NOT NULL,
    video_id uuid NOT NULL,
    doc      tsvector NOT NULL
);
INSERT INTO video_terms_next (lexeme, impact, video_id, doc)
SELECT t.lexeme, t.impact, t.video_id, v.search_tsv
FROM video_terms t JOIN videos v ON v.id = t.video_id;
DROP TABLE video_terms;
ALTER TABLE video_terms_next RENAME TO video_terms;
CREATE INDEX video_terms_walk ON video_terms (lexeme, impact, video_id) INCLUDE (doc);
ANALYZE video_terms;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION broll_video_terms_added() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO video_terms (lexeme, impact, video_id, doc)
    SELECT u.lexeme, broll_term_impact(n.search_tsv, u.lexeme), n.id, n.search_tsv
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
        SELECT u.lexeme, broll_term_impact(NEW.search_tsv, u.lexeme), NEW.id, NEW.search_tsv
        FROM unnest(NEW.search_tsv) u;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd


-- +goose Down
LOCK TABLE videos IN SHARE MODE;

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

UPDATE video_terms SET doc = strip(doc);
