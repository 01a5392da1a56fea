// Package logging builds the JSON slog logger every binary uses.
package logging

import (
	"io"
	"log/slog"
)

// New returns a JSON logger writing to w at the named level (config allows
// debug, info, warn and error). A name slog does not know leaves info, the
// zero Level: UnmarshalText changes nothing when it fails.
func New(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
