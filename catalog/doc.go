// Package catalog owns the video library: clips and their details, difficulty
// tiers, retirement, the embedding jobs, the job outbox every clip job is
// recorded in, and who owns a clip (owned.go). It stores embeddings; the
// embed package makes them. Clip files are catalog/media's, which this
// package imports; the import of clips (validation, the store of their rows
// and files) is catalog/imports', the media jobs of clips (probes, previews,
// reprobing) are catalog/mediajobs', and finding clips is catalog/search's:
// all three import this package.
package catalog
