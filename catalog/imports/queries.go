package imports

import "broll/catalog"

// The static SQL of the import, in one place. A probe the importer ran is
// written with the media job's statement (catalog.SQLMediaDone).

// importColumns are the columns of the staging table, in the order of the
// rows storeVideoMedia builds.
func importColumns() []string {
	return []string{
		"id", "title", "description", "tags", "emotion", "gender", "age_range", "location",
		"media_type", "orientation", "duration_seconds", "width", "height", "fps", "difficulty",
		"virality_score", "model_id", "model_name", "media_key", "media_content_type", "media_size",
		"preview_key", "thumbnail_key", "upload_id",
	}
}

// The import stages rows with COPY into a temporary table and then writes
// them with one INSERT ... ON CONFLICT: 100k clips are two round trips.
const sqlCreateImportTable = `
	CREATE TEMP TABLE import_clips (
		id uuid NOT NULL, title text NOT NULL, description text NOT NULL, tags text[] NOT NULL,
		emotion text NOT NULL, gender text NOT NULL, age_range text, location text,
		media_type text NOT NULL, orientation text, duration_seconds double precision,
		width integer, height integer, fps double precision, difficulty text NOT NULL,
		virality_score integer, model_id text, model_name text, media_key text NOT NULL,
		media_content_type text NOT NULL, media_size bigint NOT NULL, preview_key text,
		thumbnail_key text, upload_id uuid
	) ON COMMIT DROP`

// embeddedTextChanged compares the fields catalog.DocumentText is made of; only a
// change to them makes the stored vector wrong.
const embeddedTextChanged = `
	(v.title, v.description, v.tags, v.emotion, v.gender, v.age_range, v.location,
	 v.media_type, v.orientation)
	IS DISTINCT FROM
	(EXCLUDED.title, EXCLUDED.description, EXCLUDED.tags, EXCLUDED.emotion, EXCLUDED.gender,
	 EXCLUDED.age_range, EXCLUDED.location, EXCLUDED.media_type, EXCLUDED.orientation)`

// sqlUpsertClips writes the staged clips. The old CTE reads the rows as
// they were before this statement (all parts of one statement share a
// snapshot), which tells created from updated and which texts changed.
// A clip's file is new (or written again), so the clip is not live until
// the worker's probe has passed it (retired_at catalog.NotLive); a retired clip
// keeps its retirement: re-importing it does not revive it.
const sqlUpsertClips = `
	WITH old AS (
		SELECT v.id,
		       (v.title, v.description, v.tags, v.emotion, v.gender, v.age_range, v.location,
		        v.media_type, v.orientation)
		       IS DISTINCT FROM
		       (i.title, i.description, i.tags, i.emotion, i.gender, i.age_range, i.location,
		        i.media_type, i.orientation) AS changed
		FROM videos v JOIN import_clips i ON i.id = v.id
	), up AS (
		INSERT INTO videos AS v (id, title, description, tags, emotion, gender, age_range, location,
		       media_type, orientation, duration_seconds, width, height, fps, difficulty,
		       virality_score, model_id, model_name, media_key, media_content_type, media_size,
		       preview_key, thumbnail_key, media_status, retired_at)
		SELECT id, title, description, tags, emotion, gender, age_range, location,
		       media_type, orientation, duration_seconds, width, height, fps, difficulty,
		       virality_score, model_id, model_name, media_key, media_content_type, media_size,
		       preview_key, thumbnail_key, 'pending', ` + catalog.NotLive + `
		FROM import_clips
		ON CONFLICT (id) DO UPDATE SET
		       title = EXCLUDED.title, description = EXCLUDED.description, tags = EXCLUDED.tags,
		       emotion = EXCLUDED.emotion, gender = EXCLUDED.gender,
		       age_range = EXCLUDED.age_range, location = EXCLUDED.location,
		       media_type = EXCLUDED.media_type, orientation = EXCLUDED.orientation,
		       duration_seconds = EXCLUDED.duration_seconds, width = EXCLUDED.width,
		       height = EXCLUDED.height, fps = EXCLUDED.fps, difficulty = EXCLUDED.difficulty,
		       virality_score = EXCLUDED.virality_score, model_id = EXCLUDED.model_id,
		       model_name = EXCLUDED.model_name, media_key = EXCLUDED.media_key,
		       media_content_type = EXCLUDED.media_content_type,
		       media_size = EXCLUDED.media_size, preview_key = EXCLUDED.preview_key,
		       thumbnail_key = EXCLUDED.thumbnail_key, updated_at = now(),
		       media_status = 'pending', media_error = NULL,
		       listed_media = NULL, probe_mismatches = NULL, media_trailing_bytes = NULL,
		       retired_at = coalesce(v.retired_at, ` + catalog.NotLive + `),
		       embedding = CASE WHEN ` + embeddedTextChanged + ` THEN NULL ELSE v.embedding END,
		       embedding_model = CASE WHEN ` + embeddedTextChanged + ` THEN NULL ELSE v.embedding_model END,
		       embedding_status = CASE WHEN ` + embeddedTextChanged + ` THEN 'pending' ELSE v.embedding_status END,
		       embedding_error = CASE WHEN ` + embeddedTextChanged + ` THEN NULL ELSE v.embedding_error END,
		       embedded_at = CASE WHEN ` + embeddedTextChanged + ` THEN NULL ELSE v.embedded_at END
		RETURNING v.id
	)
	SELECT up.id, old.id IS NULL AS created, coalesce(old.changed, true) AS reembed
	FROM up LEFT JOIN old ON old.id = up.id`

// sqlClaimUploads gives each upload named by a clip to that clip, only if
// its file is complete and no other clip took it: the row lock makes
// concurrent imports of one upload take turns, and the second sees the
// first's claim. It returns the uploads that could not be claimed.
const sqlClaimUploads = `
	WITH claimed AS (
		UPDATE media_uploads u SET video_id = i.id
		FROM import_clips i
		WHERE u.id = i.upload_id AND u.received_at IS NOT NULL AND (u.video_id IS NULL OR u.video_id = i.id)
		RETURNING u.id
	)
	SELECT i.upload_id FROM import_clips i
	WHERE i.upload_id IS NOT NULL AND i.upload_id NOT IN (SELECT id FROM claimed)`
