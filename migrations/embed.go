// Package migrations holds the numbered SQL files that define the schema,
// and under functions/ the SQL functions that hold rules (one function a
// file). They are embedded into every binary and applied by `brollctl
// migrate` and by the test kit, so production and tests always run the same
// schema: the numbered files once each, in order, then every function file
// with CREATE OR REPLACE, so that changing a rule is a diff of its file.
package migrations

import "embed"

// FS holds the migration files (applied in version order; the migrator
// reads only the top level) and the function files under functions/.
//
//go:embed *.sql functions/*.sql
var FS embed.FS

// FunctionsDir is the folder of FS that holds the function files.
const FunctionsDir = "functions"
