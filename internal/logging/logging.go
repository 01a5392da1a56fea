// Package logging builds the JSON slog logger every binary uses.
package logging

import (
	"io"
	"log/slog"
)

// New returns a JSON logger writing to w at the named level.
func New(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	switch level {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
