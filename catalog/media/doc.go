// Package media keeps the catalog's clip files: the stores they live in (a
// local directory or an S3 bucket), the uploads ops send them through, the
// probe that reads what a file holds and the previews and thumbnails made
// from it. It knows files and their uploads, not clips: package catalog
// decides what a file means for a clip, and imports this package.
package media
