package catalog

// The static SQL of the catalog, in one place: what each statement reads
// and writes is seen here whole, and a change to one is one diff. Dynamic
// search statements are built by package search's builder; the
// ownership rule is a fragment (owned.go) that statements here embed.

// Clips as customers see them.

// notLive is the retired_at of a clip whose full-quality file has not
// (yet) passed the probe: out of every customer read and of the purchase
// statement through the same predicate as a retired clip (retired_at IS
// NULL is what the partial indexes hold), but told apart from a real
// retirement, which writes the time. The probe's success makes it NULL
// again (sqlMediaDone); migration 00019 explains the choice.
const notLive = `'infinity'::timestamptz`

// VideoColumns are the columns ScanVideo reads, in order, from videos v.
// price_cents is the row's copy of its tier's price (migration 00005).
const VideoColumns = `
	v.id, v.title, v.description, v.tags, v.emotion, v.gender, v.age_range, v.location,
	v.media_type, v.orientation, v.duration_seconds, v.width, v.height, v.fps, v.difficulty,
	v.price_cents, v.virality_score, v.model_id, v.model_name,
	v.preview_key IS NOT NULL, v.thumbnail_key IS NOT NULL, v.created_at,
	nullif(v.retired_at, ` + notLive + `)`

// keyPurchase joins, as o, the purchase by which key $2 owns the clip v
// (none: o.id is NULL), for the clip read at the edge (video_cache.go).
var keyPurchase = `LEFT JOIN LATERAL (SELECT p.id FROM ` + ownership("$2", "v.id") + `) o ON true`

// sqlVideoVersion finds clip $1 if key $2 may see it, with the version of
// its row (xmin) and the key's purchase of it. A key sees a live clip, or
// a retired one it owns: a retired clip leaves the catalog but not its
// buyers' libraries. A clip whose media is not sound is not live
// (notLive): nobody can have bought it, unless it was re-imported with a
// new file after the sale, and then its buyer keeps it as a retired clip's
// buyer does.
var sqlVideoVersion = `
	SELECT v.xmin, o.id
	FROM videos v ` + keyPurchase + `
	WHERE v.id = $1 AND (v.retired_at IS NULL OR o.id IS NOT NULL)`

// sqlVideoForKey reads clip $1 as sqlVideoVersion finds it for key $2, with the
// version of its row, the key's purchase of it and whether it is live.
var sqlVideoForKey = `
	SELECT ` + VideoColumns + `, NULL::float8, v.xmin, o.id, v.retired_at IS NULL
	FROM videos v ` + keyPurchase + `
	WHERE v.id = $1 AND (v.retired_at IS NULL OR o.id IS NOT NULL)`

// sqlPublicMedia reads the preview and thumbnail keys of a live clip.
const sqlPublicMedia = `
	SELECT preview_key, thumbnail_key, updated_at FROM videos
	WHERE id = $1 AND retired_at IS NULL`

// sqlOwnerships are the purchases by which key $1 owns any of the clips $2.
var sqlOwnerships = `SELECT p.id AS purchase_id, p.video_id, p.price_cents AS price_paid, p.purchased_at,
	p.license_revoked_at IS NOT NULL AS license_revoked
	FROM unnest($2::uuid[]) AS w(video) CROSS JOIN LATERAL ` + ownership("$1", "w.video")

// sqlOwnedClips are the clips key $1 owns, $2 at most (owned_sets.go),
// the rows broll_owned_purchase reads.
var sqlOwnedClips = `SELECT p.video_id FROM purchases p WHERE p.api_key_id = $1 LIMIT $2`

// Tiers.

const (
	sqlListTiers = `SELECT name, price_cents FROM tiers ORDER BY price_cents, name`

	sqlUpsertTier = `
		INSERT INTO tiers (name, price_cents) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET price_cents = EXCLUDED.price_cents, updated_at = now()
		RETURNING name, price_cents`
)

// Retirement.

// sqlRetire retires a clip that is live or waiting for its probe
// (notLive): a retirement writes its time, which a passing probe leaves
// alone. The second subquery reads the row as it was before this
// statement (one snapshot for the whole statement), so it tells an
// already retired clip (its old retired_at) from an unknown one (no row
// at all).
const sqlRetire = `
	WITH retired AS (
		UPDATE videos SET retired_at = now(), updated_at = now()
		WHERE id = $1 AND (retired_at IS NULL OR retired_at = ` + notLive + `)
		RETURNING retired_at
	)
	SELECT (SELECT retired_at FROM retired),
	       (SELECT nullif(retired_at, ` + notLive + `) FROM videos WHERE id = $1),
	       EXISTS (SELECT 1 FROM videos WHERE id = $1)`

// sqlRetiredAt reads the retirement a concurrent Retire wrote.
const sqlRetiredAt = `SELECT retired_at FROM videos WHERE id = $1 AND retired_at <> ` + notLive

// The media job (package mediajobs) and an import that probed its clips.

// The probe's figures are what a clip shows: a buyer gets the file, so
// its size, length, rate and shape are the file's, whatever the line said
// (a figure the probe cannot tell keeps the line's). What the line said is
// kept in listed_media, taken from the clip's columns the first time the
// probe overwrites them (an import resets it, and writes the line's figures
// into the columns), and the figures on which the two disagree in
// probe_mismatches (broll_media_mismatches, migrations/functions). probedSet
// is the SET list for a probe p, joined to the row v as it was before
// (p.orient is the probe's orientation).
var probedSet = `
	       media_type = p.media_type,
	       orientation = coalesce(p.orient, v.orientation),
	       duration_seconds = coalesce(p.duration, v.duration_seconds),
	       width = coalesce(nullif(p.width, 0), v.width), height = coalesce(nullif(p.height, 0), v.height),
	       fps = coalesce(nullif(p.fps, 0), v.fps),
	       listed_media = coalesce(v.listed_media,
	           broll_media_figures(v.width, v.height, v.duration_seconds, v.fps, v.orientation)),
	       probe_mismatches = broll_media_mismatches(` + listedFigures + `,
	           nullif(p.width, 0), nullif(p.height, 0), p.duration, nullif(p.fps, 0), p.orient),
	       media_trailing_bytes = nullif(p.trailing_bytes, 0),
	       media_status = 'ready', media_error = NULL, media_processed_at = now(), updated_at = now(),
	       retired_at = nullif(v.retired_at, ` + notLive + `)`

// listedFigures are the line's figures of the row v as it was before, as
// broll_media_mismatches takes them: listed_media's, or the columns'
// while it is NULL.
var listedFigures = listedFigure("width", "integer") + ", " + listedFigure("height", "integer") + ", " +
	listedFigure("duration_seconds", "float8") + ", " + listedFigure("fps", "float8") + ", " +
	listedFigure("orientation", "text")

func listedFigure(column, typ string) string {
	return `CASE WHEN v.listed_media IS NULL THEN v.` + column + ` ELSE (v.listed_media ->> '` + column + `')::` + typ + ` END`
}

// probedRows unnests the probe arrays $1-$7 and $trailing into p (one row
// per clip: id, media_type, orientation, duration, width, height, fps and
// the trailing bytes), with orient, the probe's orientation or NULL.
func probedRows(trailing string) string {
	return `SELECT p.*, nullif(p.orientation, '') AS orient FROM unnest($1::uuid[], $2::text[], $3::text[],
	                     $4::float8[], $5::int[], $6::int[], $7::float8[], ` + trailing + `::bigint[])
	       AS p(id, media_type, orientation, duration, width, height, fps, trailing_bytes)`
}

// sqlMediaDone records the probes of clips (probedSet), marks their media
// ready and puts them on sale (a retired clip stays retired), with the
// preview and thumbnail keys made for them ($8, $9; NULL: none made).
// When media_type or orientation change, the embedded text changed: the
// embedding is made pending for the worker to make again.
var sqlMediaDone = `
	WITH p AS (` + probedRows("$10") + `
	), made AS (
		SELECT * FROM unnest($1::uuid[], $8::text[], $9::text[]) AS m(id, preview_key, thumbnail_key)
	), old AS (
		SELECT v.id, v.media_type, v.orientation FROM videos v JOIN p ON p.id = v.id
	)
	UPDATE videos v SET ` + probedSet + `,
	       preview_key = coalesce(v.preview_key, made.preview_key),
	       thumbnail_key = coalesce(v.thumbnail_key, made.thumbnail_key),
	       embedding_status = CASE WHEN (old.media_type, old.orientation) IS DISTINCT FROM (p.media_type, coalesce(p.orient, v.orientation))
	                               THEN 'pending' ELSE v.embedding_status END
	FROM p JOIN old ON old.id = p.id JOIN made ON made.id = p.id WHERE v.id = p.id
	RETURNING v.id, (old.media_type, old.orientation) IS DISTINCT FROM (v.media_type, v.orientation),
	          v.embedding_status = 'pending' OR v.embedding_stale`

// Embeddings.

// sqlEmbeddingInputs reads the text of the clips $1 and, when their vector
// is current, its model.
const sqlEmbeddingInputs = `
	SELECT id, title, description, tags, emotion, gender, coalesce(age_range, ''),
	       coalesce(location, ''), media_type, coalesce(orientation, ''), coalesce(model_name, ''),
	       CASE WHEN embedding_status = 'ready' AND NOT embedding_stale THEN coalesce(embedding_model, '') ELSE '' END
	FROM videos WHERE id = ANY($1)`

// sqlStoreEmbedding stores the vector $2 of model $3 for the clip $1.
const sqlStoreEmbedding = `
	UPDATE videos SET embedding = $2, embedding_model = $3, embedding_status = 'ready',
	       embedding_error = NULL, embedded_at = now(), embedding_stale = false
	WHERE id = $1`

// sqlClipsEmbeddedEvent writes the event ($1) of the clips $2 that model $3
// made ready, if any, within the trace $4 ("" for none).
const sqlClipsEmbeddedEvent = `
	INSERT INTO webhook_events (type, trace_id, data)
	SELECT $1, nullif($4, ''), jsonb_build_object('count', count(*), 'model', $3::text, 'video_ids', jsonb_agg(id ORDER BY id))
	FROM videos WHERE id = ANY ($2) AND embedding_status = 'ready'
	HAVING count(*) > 0`

// sqlMarkEmbeddingFailed records why a clip's embedding gave up.
const sqlMarkEmbeddingFailed = `
	UPDATE videos SET embedding_status = 'failed', embedding_error = $2
	WHERE id = $1`

// Status and reembedding.

const (
	sqlEmbeddingStatus = `
		SELECT count(*),
		       count(*) FILTER (WHERE embedding_status = 'ready' AND embedding_model = $1 AND NOT embedding_stale),
		       count(*) FILTER (WHERE embedding_status = 'failed')
		FROM videos`

	// A stale clip keeps its old vector until the new one is stored; it is
	// only queued, so nothing disappears from search in the meantime.
	sqlStaleClips = `
		SELECT id FROM videos
		WHERE embedding_status = 'pending' OR embedding_stale
		   OR (embedding_status = 'ready' AND embedding_model IS DISTINCT FROM $1)
		ORDER BY created_at, id`

	sqlRequeueFailed = `
		UPDATE videos SET embedding_status = 'pending', embedding_error = NULL
		WHERE embedding_status = 'failed'
		RETURNING id`

	// Every vector keeps serving semantic search, marked stale so that the
	// worker makes it again (EmbeddingInputs) and the new one replaces it.
	sqlResetAll = `
		UPDATE videos SET embedding_stale = true, embedding_error = NULL,
		       embedding_status = CASE WHEN embedding_status = 'failed' THEN 'pending' ELSE embedding_status END
		RETURNING id`
)

// sqlMediaStatus counts clips by media state.
const sqlMediaStatus = `
	SELECT count(*) FILTER (WHERE media_status = 'pending'), count(*) FILTER (WHERE media_status = 'ready'),
	       count(*) FILTER (WHERE media_status = 'failed')
	FROM videos`

// sqlMediaFailedClips lists the latest $1 clips whose media failed.
const sqlMediaFailedClips = `
	SELECT id, title, coalesce(media_error, '') AS reason FROM videos WHERE media_status = 'failed'
	ORDER BY media_processed_at DESC NULLS LAST, id LIMIT $1`

// sqlClipState reads a clip as content operations see it (ClipState).
const sqlClipState = `
	SELECT id, title, media_status, media_error, media_processed_at AS media_processed,
	       retired_at IS NULL AS listed, nullif(retired_at, ` + notLive + `) AS retired_at,
	       embedding_status, created_at, coalesce(probe_mismatches, '[]') AS mismatches,
	       media_trailing_bytes AS trailing_bytes
	FROM videos WHERE id = $1`

// sqlMediaNotedCounts counts clips whose line disagrees with their file
// and clips whose file has trailing bytes.
const sqlMediaNotedCounts = `
	SELECT count(*) FILTER (WHERE probe_mismatches IS NOT NULL),
	       count(*) FILTER (WHERE media_trailing_bytes IS NOT NULL)
	FROM videos WHERE probe_mismatches IS NOT NULL OR media_trailing_bytes IS NOT NULL`

// sqlMediaMismatchedClips lists the latest $1 clips whose line disagrees
// with their file (index videos_probe_mismatches).
const sqlMediaMismatchedClips = `
	SELECT id, title, probe_mismatches AS mismatches FROM videos WHERE probe_mismatches IS NOT NULL
	ORDER BY media_processed_at DESC, id LIMIT $1`

// sqlMediaTrailingClips lists the latest $1 clips whose file has trailing
// bytes (index videos_trailing_bytes).
const sqlMediaTrailingClips = `
	SELECT id, title, media_trailing_bytes AS trailing_bytes FROM videos WHERE media_trailing_bytes IS NOT NULL
	ORDER BY media_processed_at DESC, id LIMIT $1`

// The job outbox.

const (
	sqlRecordJobs = `INSERT INTO job_outbox (kind, video_id, traceparent) SELECT $1, unnest($2::uuid[]), nullif($3, '') RETURNING id`

	// Only the jobs given (when $2 is not NULL), oldest first; rows another
	// relay holds are skipped, not waited for. Media, preview and reprobe
	// jobs are taken only by a queue that can run them ($3, $4, $5).
	sqlClaimJobs = `
		SELECT id, kind, video_id, coalesce(traceparent, '') FROM job_outbox
		WHERE ($2::bigint[] IS NULL OR id = ANY ($2))
		  AND (kind = 'embed' OR (kind = 'media' AND $3) OR (kind = 'previews' AND $4) OR (kind = 'reprobe' AND $5))
		ORDER BY id LIMIT $1
		FOR UPDATE SKIP LOCKED`

	sqlDeleteJobs = `DELETE FROM job_outbox WHERE id = ANY ($1)`
)

// sqlListedByID reads the live clips among $1 as a page row of
// ListedColumns and a similarity (none) holds them (ListedUnder).
const sqlListedByID = `
	SELECT ` + ListedColumns + `, NULL::float8
	FROM videos v
	WHERE v.id = ANY($1) AND v.retired_at IS NULL`
