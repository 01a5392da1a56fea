// Package imports imports clips into the catalog, all or nothing: it reads
// them (JSON Lines, or the ops endpoint's array), checks every field against
// the catalog's tiers and values and every file it names (a path, or an
// upload by upload_id), copies the files into media storage and writes the
// clips with their jobs in the catalog's job outbox, through the catalog's
// door (catalog/jobs_door.go). `brollctl clips import`, the ops endpoint and
// the demo seed import through it.
package imports
