-- +goose Up
-- A clip's keyword postings (video_terms) follow its row when it is added
-- and when it changes (00013, 00034), but nothing removed them when the
-- row was deleted. The service never deletes a clip (it retires it, which
-- removes its postings), yet an operator may delete one nobody bought,
-- and its postings were then left behind for every walk of its words to
-- read and count among its candidates, with no clip to show.
--
-- A statement trigger removes the postings of every deleted live clip,
-- through the walk index (lexeme, impact, video_id) as the update trigger
-- does, and the postings such deletes have already left are removed here.
-- That removal reads every posting once (anti-joined with the ids of
-- videos) and locks nothing that searches or writes of videos wait for.
-- +goose StatementBegin
CREATE FUNCTION broll_video_terms_removed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM video_terms t
    USING removed o, unnest(o.search_tsv) u
    WHERE o.retired_at IS NULL
      AND t.lexeme = u.lexeme AND t.impact = broll_term_impact(o.search_tsv, u.lexeme) AND t.video_id = o.id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER videos_terms_delete AFTER DELETE ON videos
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION broll_video_terms_removed();

DELETE FROM video_terms t WHERE NOT EXISTS (SELECT 1 FROM videos v WHERE v.id = t.video_id);

-- +goose Down
DROP TRIGGER videos_terms_delete ON videos;
DROP FUNCTION broll_video_terms_removed();
