// Package demo generates the demo catalog that `brollctl seed-demo` (and
// so `make run`) fills an empty install with: clips that read like a real
// UGC B-roll library, with small but real media files, imported through
// the catalog's own import. It is no part of the product: only cmd and
// tests import it (depguard keeps it so).
package demo
