// Package migrations holds the numbered SQL files that define the schema.
// They are embedded into every binary and applied by `brollctl migrate` and
// by the test kit, so production and tests always run the same schema.
package migrations

import "embed"

// FS holds the migration files, applied in version order.
//
//go:embed *.sql
var FS embed.FS
