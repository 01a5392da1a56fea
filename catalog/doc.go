// Package catalog owns the video library: clips, difficulty tiers, media
// storage, clip import and validation, list/filter/keyword/semantic search
// and the filter values. It stores embeddings; the embed package makes them.
package catalog
