-- broll_media_figures: a clip's figures as one JSON object, members left
-- out where unknown (NULL, or a probe's 0 or empty string): what
-- videos.listed_media keeps of a line.
CREATE OR REPLACE FUNCTION broll_media_figures(
    in_width integer, in_height integer, in_duration double precision, in_fps double precision,
    in_orientation text)
RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'width', nullif(in_width, 0), 'height', nullif(in_height, 0),
        'duration_seconds', nullif(in_duration, 0), 'fps', nullif(in_fps, 0),
        'orientation', nullif(in_orientation, '')))
$$;

-- broll_media_mismatches: the figures on which a clip's line (l_*) and
-- its probed file (p_*) disagree, as [{"field", "listed", "probed"}] in a
-- fixed order; NULL when they agree on every figure both give (NULL: not
-- given). Sizes and orientation must be equal; a duration may be off by
-- up to one frame (1/fps, of the file, else of the line, else 1/24 s); a
-- frame rate by up to 1% (29.97 listed as 30 is the same footage). One
-- expression without a query, so that the planner inlines it: a probe
-- batch pays for it about what it pays for building one JSON object a
-- clip, and only a disagreeing figure builds one of its own.
CREATE OR REPLACE FUNCTION broll_media_mismatches(
    l_width integer, l_height integer, l_duration double precision, l_fps double precision, l_orientation text,
    p_width integer, p_height integer, p_duration double precision, p_fps double precision, p_orientation text)
RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT nullif(jsonb_path_query_array(jsonb_build_array(
        CASE WHEN l_width <> p_width
             THEN jsonb_build_object('field', 'width', 'listed', l_width, 'probed', p_width) END,
        CASE WHEN l_height <> p_height
             THEN jsonb_build_object('field', 'height', 'listed', l_height, 'probed', p_height) END,
        CASE WHEN abs(l_duration - p_duration) > 1.0 / coalesce(nullif(p_fps, 0), nullif(l_fps, 0), 24) + 1e-9
             THEN jsonb_build_object('field', 'duration_seconds', 'listed', l_duration, 'probed', p_duration) END,
        CASE WHEN abs(l_fps - p_fps) > 0.01 * p_fps
             THEN jsonb_build_object('field', 'fps', 'listed', l_fps, 'probed', p_fps) END,
        CASE WHEN l_orientation <> p_orientation
             THEN jsonb_build_object('field', 'orientation', 'listed', l_orientation, 'probed', p_orientation) END),
        '$[*] ? (@ != null)'), '[]')
$$;
