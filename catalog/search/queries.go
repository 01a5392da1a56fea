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
// force_custom_plan otherwise.
const sqlHNSWSettings = `
	SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
	       set_config('hnsw.ef_search', $1, true),
	       set_config('hnsw.max_scan_tuples', $2, true),
	       set_config('plan_cache_mode', $3, true)`

// sqlExactScan makes the rest of the transaction sort by computed distance
// instead of walking the index. A custom plan makes the planner see it; a
// cached generic plan would not.
const sqlExactScan = `
	SELECT set_config('enable_indexscan', 'off', true),
	       set_config('plan_cache_mode', 'force_custom_plan', true)`
