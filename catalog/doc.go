// Package catalog owns the video library: clips and their details, difficulty
// tiers, clip import and validation, retirement, the media and embedding
// jobs (recorded in a job outbox) and who owns a clip (owned.go). It stores
// embeddings; the embed package makes them. Clip files are catalog/media's,
// which this package imports; finding clips is catalog/search's, which
// imports this package.
package catalog
