package collections

import "broll/catalog"

// The statements of package collections (see docs/architecture.md, "Where
// SQL lives").

// collectionColumns are a Collection's fields, from collections c, named
// as its db tags.
const collectionColumns = `c.id, c.api_key_id, c.name, c.description, c.item_count, c.livemode, c.created_at, c.updated_at`

// countUpSQL counts one more collection for key $1 unless it holds $2
// already: one row (the new count) when it may have one more, none when
// the cap is reached. The upsert's row lock serialises a key's
// creations, so concurrent ones cannot pass the cap.
const countUpSQL = `
	INSERT INTO collection_counts AS n (api_key_id, collections) VALUES ($1, 1)
	ON CONFLICT (api_key_id) DO UPDATE SET collections = n.collections + 1
	WHERE n.collections < $2
	RETURNING n.collections`

// countDownSQL counts one collection fewer for key $1.
const countDownSQL = `UPDATE collection_counts SET collections = collections - 1 WHERE api_key_id = $1 AND collections > 0`

// insertSQL makes a collection of account $1's key $2 in mode $3 (true:
// live), named $4 with description $5.
const insertSQL = `
	INSERT INTO collections AS c (account_id, api_key_id, livemode, name, description)
	VALUES ($1, $2, $3, $4, $5)
	RETURNING ` + collectionColumns

// getSQL reads collection $1 where cond (visibleTo's) holds.
func getSQL(cond string) string {
	return `SELECT ` + collectionColumns + ` FROM collections c WHERE c.id = $1 AND ` + cond
}

// listSQL reads a page of collections: where holds the conditions (the
// principal's, the key filter, the keyset), order the ORDER BY, limit the
// placeholder of the page size (plus one).
func listSQL(where, order, limit string) string {
	return `SELECT ` + collectionColumns + ` FROM collections c WHERE ` + where + ` ORDER BY ` + order + ` LIMIT ` + limit
}

// lockOwnSQL locks collection $1 if key $2 made it, for a change, and
// reads it with its last position (lockedCollection).
const lockOwnSQL = `SELECT ` + collectionColumns + `, c.last_position FROM collections c WHERE c.id = $1 AND c.api_key_id = $2 FOR UPDATE`

// updateSQL renames collection $1 ($2, NULL: kept) and sets its
// description when $3 ($4, NULL clears it).
const updateSQL = `
	UPDATE collections c SET name = coalesce($2, c.name),
		description = CASE WHEN $3 THEN $4 ELSE c.description END, updated_at = now()
	WHERE c.id = $1
	RETURNING ` + collectionColumns

// deleteSQL removes collection $1 (its items go with it).
const deleteSQL = `DELETE FROM collections WHERE id = $1`

// unknownClipsSQL are those of clips $2 that may not be added to
// collection $1: no such clip, or one not on sale (retired, or its media
// not passed by the probe), unless the collection holds it already.
const unknownClipsSQL = `
	SELECT u.id FROM unnest($2::uuid[]) AS u(id)
	WHERE NOT EXISTS (SELECT 1 FROM videos v WHERE v.id = u.id AND v.retired_at IS NULL AND v.media_status = 'ready')
	  AND NOT EXISTS (SELECT 1 FROM collection_items ci WHERE ci.collection_id = $1 AND ci.video_id = u.id)`

// addItemsSQL adds clips $2 (in their order, each once) to collection $1
// after its position $3, skipping those it holds; one row per clip added.
// Run under the collection's row lock (lockOwnSQL), which makes the
// positions and the count exact.
const addItemsSQL = `
	WITH input AS (
		SELECT DISTINCT ON (u.id) u.id, u.ord FROM unnest($2::uuid[]) WITH ORDINALITY AS u(id, ord) ORDER BY u.id, u.ord
	), fresh AS (
		SELECT i.id, $3::bigint + row_number() OVER (ORDER BY i.ord) AS position FROM input i
		WHERE NOT EXISTS (SELECT 1 FROM collection_items ci WHERE ci.collection_id = $1 AND ci.video_id = i.id)
	)
	INSERT INTO collection_items (collection_id, video_id, position)
	SELECT $1, f.id, f.position FROM fresh f
	RETURNING position`

// countItemsSQL moves collection $1's count by $2 and its last position
// by $3.
const countItemsSQL = `
	UPDATE collections c SET item_count = c.item_count + $2, last_position = c.last_position + $3, updated_at = now()
	WHERE c.id = $1
	RETURNING ` + collectionColumns + `, c.last_position`

// removeItemSQL removes clip $2 from collection $1; a row when it was there.
const removeItemSQL = `DELETE FROM collection_items WHERE collection_id = $1 AND video_id = $2 RETURNING position`

// notLive is the retired_at of a clip whose media has not passed the
// probe (catalog's, migration 00019): not retired, not on sale either.
const notLive = `'infinity'::timestamptz`

// itemsSQL reads a page of collection $1's items after position $2, in
// the order added, $3 rows: the clip (catalog.ListedColumns, a NULL
// similarity), its position and when it was added. Clips whose media is
// not sound are left out, as from every list; retired ones stay, marked.
// The index collection_items_order_idx gives the order and the keyset.
var itemsSQL = `
	SELECT ` + catalog.ListedColumns + `, NULL::float8, ci.position, ci.added_at
	FROM collection_items ci JOIN videos v ON v.id = ci.video_id
	WHERE ci.collection_id = $1 AND ci.position > $2 AND v.retired_at IS DISTINCT FROM ` + notLive + `
	ORDER BY ci.position
	LIMIT $3`

// buyLinesSQL is every clip of collection $1 in the order added, with why
// key $2 would not buy it: already_owned (whatever became of the clip),
// retired, unavailable (its media not passed by the probe), or an empty
// reason to buy; and the purchase by which the key owns it, if it does
// (its id and time).
var buyLinesSQL = `
	SELECT ci.video_id, CASE
		WHEN o.id IS NOT NULL THEN '` + SkipAlreadyOwned + `'
		WHEN v.retired_at IS NOT NULL AND v.retired_at <> ` + notLive + ` THEN '` + SkipRetired + `'
		WHEN v.retired_at IS NOT NULL OR v.media_status <> 'ready' THEN '` + SkipUnavailable + `'
		ELSE '' END, o.id, o.purchased_at
	FROM collection_items ci JOIN videos v ON v.id = ci.video_id
	LEFT JOIN LATERAL (SELECT p.id, p.purchased_at FROM ` + catalog.OwnershipSQL("$2", "ci.video_id") + `) o ON true
	WHERE ci.collection_id = $1
	ORDER BY ci.position`

// sweepSQL removes up to $2 collections of keys revoked before $1 (their
// items go with them), and the counts of such keys left with none; the
// number of collections removed. A count whose key still had collections
// when the statement began goes at the next sweep.
const sweepSQL = `
	WITH gone AS (
		DELETE FROM collections c WHERE c.id IN (
			SELECT c2.id FROM collections c2 JOIN api_keys k ON k.id = c2.api_key_id
			WHERE k.revoked_at < $1 LIMIT $2)
		RETURNING c.api_key_id
	), counts AS (
		DELETE FROM collection_counts n USING api_keys k
		WHERE k.id = n.api_key_id AND k.revoked_at < $1
		  AND NOT EXISTS (SELECT 1 FROM collections c WHERE c.api_key_id = n.api_key_id)
	)
	SELECT count(*) FROM gone`

// keyInFamilySQL: is key $2 root key $1 itself or one of its customer keys.
const keyInFamilySQL = `SELECT EXISTS (SELECT 1 FROM broll_key_family($1) f(id) WHERE f.id = $2)`

// keyOfAccountSQL: is key $2 a key of account $1.
const keyOfAccountSQL = `SELECT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $2 AND k.account_id = $1)`
