package search

// The static SQL of search, in one place. The statements of a search
// itself depend on its query and are built by the one builder of sql.go
// (keyword.go adds the keyword walk), with placeholders only.

// sqlFilterValues counts every facet in one pass over the live clips.
// GROUPING tells which grouping set a row belongs to; a NULL value (a clip
// without an age range, say) is no value to filter by and is left out.
const sqlFilterValues = `
	SELECT CASE WHEN GROUPING(emotion) = 0 THEN 'emotion'
	            WHEN GROUPING(gender) = 0 THEN 'gender'
	            WHEN GROUPING(age_range) = 0 THEN 'age_range'
	            WHEN GROUPING(location) = 0 THEN 'location'
	            WHEN GROUPING(media_type) = 0 THEN 'media_type'
	            WHEN GROUPING(orientation) = 0 THEN 'orientation'
	            WHEN GROUPING(difficulty) = 0 THEN 'difficulty'
	            ELSE 'model' END AS facet,
	       coalesce(emotion, gender, age_range, location, media_type, orientation, difficulty, model_id),
	       coalesce(max(model_name), ''), count(*)
	FROM videos
	WHERE retired_at IS NULL
	GROUP BY GROUPING SETS ((emotion), (gender), (age_range), (location), (media_type),
	                        (orientation), (difficulty), (model_id))`

// sqlHNSWSettings sets the vector index up for a semantic page (hnswSettings).
// The third argument is the plan_cache_mode: force_generic_plan for a page
// that may keep the plan its connection made once (searchSQL.planOnce),
// force_custom_plan otherwise; the fourth is hnsw.iterative_scan (off or
// relaxed_order, runNearest).
const sqlHNSWSettings = `
	SELECT set_config('hnsw.iterative_scan', $4, true),
	       set_config('hnsw.ef_search', $1, true),
	       set_config('hnsw.max_scan_tuples', $2, true),
	       set_config('plan_cache_mode', $3, true)`

// sqlExactScan makes the rest of the transaction sort by computed distance
// instead of walking the index. A custom plan makes the planner see it; a
// cached generic plan would not.
const sqlExactScan = `
	SELECT set_config('enable_indexscan', 'off', true),
	       set_config('plan_cache_mode', 'force_custom_plan', true)`

// The warm-up (warm.go).

// sqlWarmRelations lists what searches read, most needed first: the HNSW
// graphs of the stored halfvecs (the whole catalog's first), the clip
// rows, which hold those halfvecs, the indexes of videos that lists, sorts
// and the id lookup read, then the keyword postings. Not the out-of-line
// full vectors: no search reads them. Each with its size, and the room
// there is: PrewarmShare ($1) of shared_buffers.
const sqlWarmRelations = `
	WITH rels AS (
		SELECT i.indexrelid AS rel, CASE WHEN a.amname = 'hnsw' THEN 0 ELSE 2 END AS rank
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = 'videos'::regclass AND i.indisvalid AND i.indisready AND a.amname <> 'gin'
		UNION ALL SELECT 'videos'::regclass, 1
		UNION ALL SELECT i.indexrelid, 3 FROM pg_index i WHERE i.indrelid = 'video_terms'::regclass AND i.indisvalid
	)
	SELECT rel::regclass::text, pg_relation_size(rel),
	       (SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers') * $1::float8
	FROM rels
	ORDER BY rank, rel <> 'videos_half_hnsw'::regclass, rel::regclass::text`

// sqlPrewarmInstalled says whether pg_prewarm can be called.
const sqlPrewarmInstalled = `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm')`

// sqlPrewarm loads relation $1 into shared buffers.
const sqlPrewarm = `SELECT pg_prewarm($1::regclass)`

// sqlClipState says whether clip $1, if it is on sale (a clip whose media
// is not sound has retired_at 'infinity'), has a ready vector of model $2.
const sqlClipState = `
	SELECT coalesce(embedding_status = 'ready' AND embedding_model = $2, false) FROM videos
	WHERE id = $1 AND retired_at IS NULL`

// sqlListings reads what lists filter and sort by of every live clip, for
// a node's listings (listings.go), at most $1 of them. The equality
// filters come in listings' facet order.
const sqlListings = `
	SELECT id, created_at, price_cents, duration_seconds, virality_score,
	       emotion, gender, age_range, location, media_type, orientation, difficulty, model_id
	FROM videos
	WHERE retired_at IS NULL
	LIMIT $1`

// sqlListingsLockTimeout bounds how long the read of listings waits for a
// lock on videos (an exclusive one, as a migration takes): a read nobody
// waits for gives up, and is tried again later.
const sqlListingsLockTimeout = `SELECT set_config('lock_timeout', '200ms', true)`

// The calibration of the candidate list (calibrate.go).

// sqlCalibrationClips counts the live clips with a ready vector of model
// $1, up to $2, and says how many rows videos holds by the planner's
// statistics (-1 before the first ANALYZE), which sizes the sample.
const sqlCalibrationClips = `
	SELECT (SELECT count(*) FROM (
	            SELECT 1 FROM videos
	            WHERE retired_at IS NULL AND embedding_status = 'ready' AND embedding_model = $1
	              AND embedding_half IS NOT NULL
	            LIMIT $2) s),
	       (SELECT reltuples FROM pg_class WHERE oid = 'videos'::regclass)`

// sqlCalibrationSample draws up to $2 live clips with a ready vector of
// model $1 from a SYSTEM sample of about $3 percent of the table's pages,
// so that a large catalog is not read whole to pick a hundred clips.
const sqlCalibrationSample = `
	SELECT id, embedding_half FROM videos TABLESAMPLE SYSTEM ($3)
	WHERE retired_at IS NULL AND embedding_status = 'ready' AND embedding_model = $1
	  AND embedding_half IS NOT NULL
	ORDER BY random()
	LIMIT $2`

// sqlCalibrationNearest is a semantic page's walk, reduced to the ids: the
// $4 live clips with a ready vector of model $2 nearest to $1, clip $3
// left out. The settings before it choose the walk or an exact scan.
const sqlCalibrationNearest = `
	SELECT v.id FROM videos v
	WHERE v.retired_at IS NULL AND v.embedding_status = 'ready' AND v.embedding_model = $2 AND v.id <> $3
	ORDER BY v.embedding_half <=> $1::halfvec(768)
	LIMIT $4`

// sqlStoreCalibration keeps a calibration's choice for model $1.
const sqlStoreCalibration = `
	INSERT INTO semantic_calibrations (model, ef_search, recall, target, queries, measured, source)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (model) DO UPDATE SET ef_search = EXCLUDED.ef_search, recall = EXCLUDED.recall,
	    target = EXCLUDED.target, queries = EXCLUDED.queries, measured = EXCLUDED.measured,
	    source = EXCLUDED.source, measured_at = now()
	RETURNING measured_at`

// sqlCalibratedList is the candidate list calibrated for model $1.
const sqlCalibratedList = `SELECT ef_search FROM semantic_calibrations WHERE model = $1`

// sqlCalibrations lists every model's calibration.
const sqlCalibrations = `
	SELECT model, source, ef_search, recall, target, queries, measured, measured_at
	FROM semantic_calibrations ORDER BY model`
