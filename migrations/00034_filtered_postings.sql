-- +goose Up
-- A keyword search with filters beside its words (catalog, keywordWalkSQL)
-- walked the postings and checked each match against the filters in the
-- clip's row of videos: an index probe and a heap fetch per match, and,
-- to bound them, only the first few hundred matches of each walk. Filters
-- that pass few clips (an emotion and a gender, about one clip in forty)
-- left the walk short of a page nearly always, and the full-text index
-- answered at ten times the cost (docs/performance.md, "Keyword searches
-- with filters").
--
-- Each posting now carries what a search filters by, as its clip's row
-- holds it (the columns catalog's addFilters names), and two walk indexes
-- hold them too, so a walk checks the filters in the index alone, as it
-- checks the words. The postings grow by about 60 bytes each on the
-- benchmark's catalog. The update trigger rewrites a clip's postings when
-- any of these columns changes, not only its words.
--
-- The release before reads lexeme, impact, video_id and doc only, so it
-- runs on either form. As in 00033, the table is rebuilt beside the old
-- one while videos is locked against writes (SHARE: searches and other
-- reads go on), so that no clip changes between the copy and the new
-- triggers.
LOCK TABLE videos IN SHARE MODE;

CREATE TABLE video_terms_next (
    lexeme           text COLLATE "C" NOT NULL,
    impact           real NOT NULL,
    video_id         uuid NOT NULL,
    doc              tsvector NOT NULL,
    emotion          text NOT NULL,
    gender           text NOT NULL,
    age_range        text,
    location         text,
    media_type       text NOT NULL,
    orientation      text,
    difficulty       text NOT NULL,
    model_id         text,
    duration_seconds double precision,
    virality_score   integer
);
INSERT INTO video_terms_next (lexeme, impact, video_id, doc, emotion, gender, age_range, location, media_type,
                              orientation, difficulty, model_id, duration_seconds, virality_score)
SELECT t.lexeme, t.impact, t.video_id, t.doc, v.emotion, v.gender, v.age_range, v.location, v.media_type,
       v.orientation, v.difficulty, v.model_id, v.duration_seconds, v.virality_score
FROM video_terms t JOIN videos v ON v.id = t.video_id;
DROP TABLE video_terms;
ALTER TABLE video_terms_next RENAME TO video_terms;
-- Three orders of the postings, each read by the index alone: a walk
-- without filters reads the narrow one (as before: the filter columns
-- would make each entry it passes a third longer, and a walk without
-- filters a sixth slower in Postgres); a walk with filters, the wide one;
-- a walk with an emotion, which about one clip in thirteen has, only the
-- postings of that emotion. The planner takes the smallest that serves.
CREATE INDEX video_terms_walk ON video_terms (lexeme, impact, video_id) INCLUDE (doc);
CREATE INDEX video_terms_walk_filtered ON video_terms (lexeme, impact, video_id)
    INCLUDE (doc, emotion, gender, age_range, location, media_type, orientation, difficulty, model_id,
             duration_seconds, virality_score);
CREATE INDEX video_terms_walk_emotion ON video_terms (lexeme, emotion, impact, video_id)
    INCLUDE (doc, gender, age_range, location, media_type, orientation, difficulty, model_id,
             duration_seconds, virality_score);
ANALYZE video_terms;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION broll_video_terms_added() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO video_terms (lexeme, impact, video_id, doc, emotion, gender, age_range, location, media_type,
                             orientation, difficulty, model_id, duration_seconds, virality_score)
    SELECT u.lexeme, broll_term_impact(n.search_tsv, u.lexeme), n.id, n.search_tsv, n.emotion, n.gender,
           n.age_range, n.location, n.media_type, n.orientation, n.difficulty, n.model_id, n.duration_seconds,
           n.virality_score
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
        INSERT INTO video_terms (lexeme, impact, video_id, doc, emotion, gender, age_range, location, media_type,
                                 orientation, difficulty, model_id, duration_seconds, virality_score)
        SELECT u.lexeme, broll_term_impact(NEW.search_tsv, u.lexeme), NEW.id, NEW.search_tsv, NEW.emotion,
               NEW.gender, NEW.age_range, NEW.location, NEW.media_type, NEW.orientation, NEW.difficulty,
               NEW.model_id, NEW.duration_seconds, NEW.virality_score
        FROM unnest(NEW.search_tsv) u;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

DROP TRIGGER videos_terms_update ON videos;
CREATE TRIGGER videos_terms_update AFTER UPDATE ON videos
    FOR EACH ROW WHEN (OLD.search_tsv IS DISTINCT FROM NEW.search_tsv OR OLD.retired_at IS DISTINCT FROM NEW.retired_at
        OR (OLD.emotion, OLD.gender, OLD.age_range, OLD.location, OLD.media_type, OLD.orientation, OLD.difficulty,
            OLD.model_id, OLD.duration_seconds, OLD.virality_score)
           IS DISTINCT FROM (NEW.emotion, NEW.gender, NEW.age_range, NEW.location, NEW.media_type, NEW.orientation,
            NEW.difficulty, NEW.model_id, NEW.duration_seconds, NEW.virality_score))
    EXECUTE FUNCTION broll_video_terms_changed();


-- +goose Down
LOCK TABLE videos IN SHARE MODE;

DROP TRIGGER videos_terms_update ON videos;
CREATE TRIGGER videos_terms_update AFTER UPDATE ON videos
    FOR EACH ROW WHEN (OLD.search_tsv IS DISTINCT FROM NEW.search_tsv OR OLD.retired_at IS DISTINCT FROM NEW.retired_at)
    EXECUTE FUNCTION broll_video_terms_changed();

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

-- Dropping the columns drops the two indexes that include them.
ALTER TABLE video_terms DROP COLUMN emotion, DROP COLUMN gender, DROP COLUMN age_range, DROP COLUMN location,
    DROP COLUMN media_type, DROP COLUMN orientation, DROP COLUMN difficulty, DROP COLUMN model_id,
    DROP COLUMN duration_seconds, DROP COLUMN virality_score;
