// Package docs holds the user-facing guides that the API node serves, so
// that the text in the repository and the text at /docs/... never differ.
package docs

import _ "embed"

// Migration is the v0 -> v1 migration guide (migration.md), served at
// /docs/migration and linked from every legacy response's Sunset link.
//
//go:embed migration.md
var Migration []byte
