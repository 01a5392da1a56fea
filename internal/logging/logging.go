// Package logging builds the JSON slog logger every binary uses.
package logging

import (
	"io"
	"log/slog"
	"regexp"
)

// New returns a JSON logger writing to w at the named level (config allows
// debug, info, warn and error). A name slog does not know leaves info, the
// zero Level: UnmarshalText changes nothing when it fails.
//
// The "error" attribute of every line is stripped of network addresses:
// drivers write the hosts and ports they tried, and the resolver they
// asked, into their errors (pgx lists every host of a multi-host
// DATABASE_URL), and logs must not name the service's internal hosts.
func New(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: redactErrors}))
}

// addresses matches what names a host in an error's text: a lookup of a
// name, IPv4 and IPv6 addresses, and host:port.
var addresses = regexp.MustCompile(`lookup \S+|\[[\w:.%]*\](?::\d{1,5})?|` +
	`\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b|(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}|` +
	`\b[A-Za-z][\w-]*(?:\.[\w-]+)*:\d{1,5}\b`)

func redactErrors(_ []string, a slog.Attr) slog.Attr {
	if a.Key != "error" {
		return a
	}
	var text string
	switch v := a.Value.Resolve(); {
	case v.Kind() == slog.KindString:
		text = v.String()
	case v.Kind() == slog.KindAny:
		err, ok := v.Any().(error)
		if !ok {
			return a
		}
		text = err.Error()
	default:
		return a
	}
	text = addresses.ReplaceAllString(text, "[address]")
	// pgx follows each address with the name it was given: "[address] (db1)".
	return slog.String(a.Key, namedAddress.ReplaceAllString(text, "[address]"))
}

var namedAddress = regexp.MustCompile(`\[address\] \([^)\s]*\)`)
