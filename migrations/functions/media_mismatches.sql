-- broll_media_figures: a clip's figures as one JSON object, members left
-- out where unknown (NULL, or a probe's 0 or empty string).
CREATE OR REPLACE FUNCTION broll_media_figures(
    in_width integer, in_height integer, in_duration double precision, in_fps double precision,
    in_orientation text)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'width', nullif(in_width, 0), 'height', nullif(in_height, 0),
        'duration_seconds', nullif(in_duration, 0), 'fps', nullif(in_fps, 0),
        'orientation', nullif(in_orientation, '')))
$$;

-- broll_media_mismatches: where a clip's line (in_listed) and its probed
-- file (in_probed), both as broll_media_figures makes them, disagree, as
-- [{"field", "listed", "probed"}] in a fixed order; NULL when they agree
-- on every figure both give. Sizes and orientation must be equal; a
-- duration may be off by up to one frame (1/fps, of the file, else of the
-- line, else 1/24 s); a frame rate by up to 1% (29.97 listed as 30 is the
-- same footage).
CREATE OR REPLACE FUNCTION broll_media_mismatches(in_listed jsonb, in_probed jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT jsonb_agg(jsonb_build_object('field', f.field, 'listed', in_listed -> f.field,
                                        'probed', in_probed -> f.field) ORDER BY f.ord)
    FROM (VALUES (1, 'width'), (2, 'height'), (3, 'duration_seconds'), (4, 'fps'), (5, 'orientation'))
         AS f(ord, field)
    WHERE in_listed ? f.field AND in_probed ? f.field
      AND CASE f.field
          WHEN 'duration_seconds' THEN
              abs((in_listed ->> f.field)::float8 - (in_probed ->> f.field)::float8)
              > 1.0 / coalesce((in_probed ->> 'fps')::float8, (in_listed ->> 'fps')::float8, 24) + 1e-9
          WHEN 'fps' THEN
              abs((in_listed ->> f.field)::float8 - (in_probed ->> f.field)::float8)
              > 0.01 * (in_probed ->> f.field)::float8
          ELSE in_listed -> f.field <> in_probed -> f.field
      END
$$;
