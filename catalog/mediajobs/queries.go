package mediajobs

import "broll/catalog"

// The static SQL of the media jobs: the media job of a clip, media
// batches, previews and reprobing. The fragments they share with an
// import's own probes (the probe's SET list and rows, and what keeps a
// clip off sale) are the catalog's (catalog/queries.go).

// sqlMediaJob reads what the media job of a clip needs.
const sqlMediaJob = `
	SELECT media_key, media_type, orientation, duration_seconds, width, height, fps,
	       preview_key, thumbnail_key
	FROM videos WHERE id = $1`

// sqlProbedDone is catalog.SQLMediaDone for a batch, with the vectors made for it:
// a clip's figures, its vector (when one is given) and its sale are one
// row update. Only rows unchanged since ProbePending read them are written
// ($10, updated_at): a clip imported again meanwhile has a new file and a
// new job. A clip without a new vector whose embedded text the probe
// changed is made pending, as catalog.SQLMediaDone does. Returned per clip:
// whether it still needs a vector, and whether its preview or thumbnail
// is still to be made.
var sqlProbedDone = `
	WITH p AS (` + catalog.ProbedRows("$11") + `
	), got AS (
		SELECT * FROM unnest($1::uuid[], $8::vector[], $10::timestamptz[]) AS g(id, embedding, read_at)
	), old AS (
		SELECT v.id, v.media_type, v.orientation FROM videos v JOIN got ON got.id = v.id
		WHERE v.media_status = 'pending' AND v.updated_at = got.read_at
	)
	UPDATE videos v SET ` + catalog.ProbedSet + `,
	       embedding = coalesce(got.embedding, v.embedding),
	       embedding_model = CASE WHEN got.embedding IS NOT NULL THEN $9 ELSE v.embedding_model END,
	       embedding_status = CASE
	           WHEN got.embedding IS NOT NULL THEN 'ready'
	           WHEN (old.media_type, old.orientation) IS DISTINCT FROM (p.media_type, coalesce(p.orient, v.orientation))
	           THEN 'pending' ELSE v.embedding_status END,
	       embedding_error = CASE WHEN got.embedding IS NOT NULL THEN NULL ELSE v.embedding_error END,
	       embedded_at = CASE WHEN got.embedding IS NOT NULL THEN now() ELSE v.embedded_at END,
	       embedding_stale = CASE WHEN got.embedding IS NOT NULL THEN false ELSE v.embedding_stale END
	FROM p JOIN old ON old.id = p.id JOIN got ON got.id = p.id WHERE v.id = p.id
	RETURNING v.id, got.embedding IS NOT NULL,
	          v.embedding_status = 'pending' OR v.embedding_stale
	          OR (v.embedding_status = 'ready' AND v.embedding_model IS DISTINCT FROM $9),
	          v.thumbnail_key IS NULL OR (v.preview_key IS NULL AND v.media_type = 'video')`

// sqlMarkMediaFailed keeps a clip whose file failed out of the catalog
// (notLive), with the reason.
const sqlMarkMediaFailed = `
	UPDATE videos SET media_status = 'failed', media_error = $2, media_processed_at = now(),
	       retired_at = coalesce(retired_at, ` + catalog.NotLive + `)
	WHERE id = $1`

// Media batches (media_batch.go).

// sqlPendingMedia reads, for ProbePending, the clips of $1 still waiting
// for their probe: the file, the row's version and the embedded text.
const sqlPendingMedia = `
	SELECT id, media_key, updated_at, title, description, tags, emotion, gender, coalesce(age_range, ''),
	       coalesce(location, ''), media_type, coalesce(orientation, ''),
	       CASE WHEN embedding_status = 'ready' AND NOT embedding_stale THEN coalesce(embedding_model, '') ELSE '' END
	FROM videos WHERE id = ANY ($1) AND media_status = 'pending'`

// sqlProbedRefused marks the clips whose file the probe refused, as
// MarkMediaFailed does, if unchanged since they were read.
const sqlProbedRefused = `
	UPDATE videos v SET media_status = 'failed', media_error = left(r.reason, 500), media_processed_at = now(),
	       retired_at = coalesce(v.retired_at, ` + catalog.NotLive + `)
	FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS r(id, reason, read_at)
	WHERE v.id = r.id AND v.media_status = 'pending' AND v.updated_at = r.read_at`

// sqlEmbeddedEvent is StoreEmbeddings' event for the clips of a batch
// that got their vector, within the trace $4 ("" for none).
const sqlEmbeddedEvent = `
	INSERT INTO webhook_events (type, trace_id, data)
	SELECT $1, nullif($4, ''), jsonb_build_object('count', count(*), 'model', $3::text, 'video_ids', jsonb_agg(id ORDER BY id))
	FROM unnest($2::uuid[]) AS id
	HAVING count(*) > 0`

// Previews and thumbnails (media_previews.go).

// sqlPreviewJob reads what a previews job of a clip on sale needs.
const sqlPreviewJob = `
	SELECT media_key, media_type, coalesce(duration_seconds, 0), preview_key IS NULL, thumbnail_key IS NULL
	FROM videos WHERE id = $1 AND media_status = 'ready'`

// A preview or thumbnail made for a file that was replaced meanwhile (the
// clip imported again: pending) is not recorded; the new file's job makes
// its own.
const sqlPreviewsDone = `
	UPDATE videos SET preview_key = coalesce(preview_key, $2), thumbnail_key = coalesce(thumbnail_key, $3)
	WHERE id = $1 AND media_status = 'ready' AND media_key = $4`

// Reprobing (reprobe.go).

// sqlReprobeOpen opens run $1 over the clips whose file was probed
// (passed or refused), all or clip $2 or those probed since $3: each gets
// a fresh media_reprobes row (a clip is in one run at a time).
const sqlReprobeOpen = `
	INSERT INTO media_reprobes (video_id, run_id)
	SELECT id, $1 FROM videos
	WHERE media_status IN ('ready', 'failed') AND ($2::uuid IS NULL OR id = $2)
	  AND ($3::timestamptz IS NULL OR media_processed_at >= $3)
	ORDER BY created_at, id
	ON CONFLICT (video_id) DO UPDATE SET run_id = EXCLUDED.run_id, queued_at = now(), done_at = NULL,
	       outcome = NULL, changes = NULL, reason = NULL
	RETURNING video_id`

const sqlVideoExists = `SELECT EXISTS (SELECT 1 FROM videos WHERE id = $1)`

// clipMediaJSON is what a reprobe may change on the clip v (clipMedia).
const clipMediaJSON = `jsonb_build_object(
	'figures', broll_media_figures(v.width, v.height, v.duration_seconds, v.fps, v.orientation),
	'media_type', v.media_type, 'media_status', v.media_status, 'media_error', v.media_error)`

// sqlReprobeSkipPending closes the open reprobes of those of $1 imported
// again since (pending): their new file's probe decides.
const sqlReprobeSkipPending = `
	UPDATE media_reprobes r SET done_at = now(), outcome = 'skipped'
	FROM videos v
	WHERE r.video_id = v.id AND v.id = ANY ($1) AND r.done_at IS NULL AND v.media_status = 'pending'`

// sqlReprobeRead reads those of $1 with an open reprobe: the file, the
// row's version and what a reprobe may change.
const sqlReprobeRead = `
	SELECT v.id, v.media_key, v.updated_at, ` + clipMediaJSON + `
	FROM videos v JOIN media_reprobes r ON r.video_id = v.id AND r.done_at IS NULL
	WHERE v.id = ANY ($1) AND v.media_status IN ('ready', 'failed')`

// sqlReprobeSound stores a sound file's probe ($1-$7, the trailing bytes
// $9) on a clip unchanged since it was read ($8): its figures as a first
// probe stores them (probedSet, which puts a failed clip back on sale).
// An embedded text the probe changed makes a ready vector stale (it serves
// search until the new one is stored) and a failed one pending. Returned:
// the clip after, and whether it needs an embedding job.
var sqlReprobeSound = `
	WITH p AS (` + catalog.ProbedRows("$9") + `
	), r AS (
		SELECT * FROM unnest($1::uuid[], $8::timestamptz[]) AS r(id, read_at)
	), old AS (
		SELECT v.id, v.media_type, v.orientation FROM videos v JOIN r ON r.id = v.id
		WHERE v.media_status IN ('ready', 'failed') AND v.updated_at = r.read_at
	)
	UPDATE videos v SET ` + catalog.ProbedSet + `,
	       embedding_stale = v.embedding_stale OR (v.embedding_status = 'ready' AND ` + reprobeTextChanged + `),
	       embedding_status = CASE WHEN v.embedding_status = 'failed' AND ` + reprobeTextChanged + `
	                               THEN 'pending' ELSE v.embedding_status END
	FROM p JOIN old ON old.id = p.id WHERE v.id = p.id
	RETURNING ` + clipMediaJSON + `,
	          (old.media_type, old.orientation) IS DISTINCT FROM (v.media_type, v.orientation)
	          OR v.embedding_status = 'pending'`

// reprobeTextChanged: the probe p changes the embedded text of v (as before).
const reprobeTextChanged = `(old.media_type, old.orientation) IS DISTINCT FROM (p.media_type, coalesce(p.orient, v.orientation))`

// sqlReprobeRefused fails clip $1, unchanged since it was read ($3), with
// reason $2, and takes it off sale (notLive; a retirement stays).
var sqlReprobeRefused = `
	UPDATE videos v SET media_status = 'failed', media_error = left($2, 500), media_processed_at = now(),
	       updated_at = now(), retired_at = coalesce(v.retired_at, ` + catalog.NotLive + `)
	WHERE v.id = $1 AND v.media_status IN ('ready', 'failed') AND v.updated_at = $3
	RETURNING ` + clipMediaJSON

// sqlReprobeDone closes clip $1's open reprobe with outcome $2, changes
// $3 and reason $4.
const sqlReprobeDone = `
	UPDATE media_reprobes SET done_at = now(), outcome = $2, changes = $3, reason = $4
	WHERE video_id = $1 AND done_at IS NULL`

// sqlReprobeGaveUp closes the open reprobes of $1 as errors, reason $2.
const sqlReprobeGaveUp = `
	UPDATE media_reprobes SET done_at = now(), outcome = 'error', reason = $2
	WHERE video_id = ANY ($1) AND done_at IS NULL`

// sqlReprobeReport reads run $1's clips, oldest first.
const sqlReprobeReport = `
	SELECT r.video_id AS id, v.title, r.outcome, coalesce(r.changes, '[]') AS changes, r.reason
	FROM media_reprobes r JOIN videos v ON v.id = r.video_id
	WHERE r.run_id = $1
	ORDER BY v.created_at, v.id`

// sqlReprobeProgress counts run $1's clips and those done.
const sqlReprobeProgress = `SELECT count(*), count(done_at) FROM media_reprobes WHERE run_id = $1`
