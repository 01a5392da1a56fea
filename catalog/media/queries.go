package media

// The static SQL of the media package, in one place: the uploads
// (media_uploads). An import claims an upload in its own transaction, with
// package catalog's statement.

// sqlCreateUpload records an upload a key asked for.
const sqlCreateUpload = `
	INSERT INTO media_uploads (id, api_key_id, filename, content_type, size, media_key, expires_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7)`

// sqlUploadOfKey reads the upload $1 of the key $2, for its PUT.
const sqlUploadOfKey = `
	SELECT media_key, content_type, size, expires_at, received_at IS NOT NULL, video_id IS NOT NULL
	FROM media_uploads WHERE id = $1 AND api_key_id = $2`

// sqlLockUpload locks the upload $1 and tells whether its bytes are in or
// a clip took it.
const sqlLockUpload = `
	SELECT received_at IS NOT NULL, video_id IS NOT NULL FROM media_uploads WHERE id = $1 FOR UPDATE`

// sqlUploadReceived marks the upload $1 complete.
const sqlUploadReceived = `UPDATE media_uploads SET received_at = now() WHERE id = $1`

// sqlFindUpload reads the upload $1 of the key $2 (NULL: of any key).
const sqlFindUpload = `
	SELECT media_key, size, received_at IS NOT NULL, video_id FROM media_uploads
	WHERE id = $1 AND ($2::uuid IS NULL OR api_key_id = $2)`

// sqlUploadStored marks the upload $1 complete once its s3 object is
// whole; an upload already marked keeps its time.
const sqlUploadStored = `
	UPDATE media_uploads SET received_at = now() WHERE id = $1 AND received_at IS NULL`
