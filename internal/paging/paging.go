// Package paging reads the paging parameters every list endpoint shares
// (limit, page or offset, cursor) with the same defaults, bounds and
// messages, and encodes the opaque keyset cursors they hand out.
package paging

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"broll/internal/apperr"
)

// Bounds are one list's paging limits.
type Bounds struct {
	// DefaultLimit applies when limit is absent; a limit above MaxLimit is
	// clamped to it.
	DefaultLimit, MaxLimit int
	// Window bounds offset+limit: a deep OFFSET costs a scan of everything
	// it skips. A cursor is not bounded by it (it costs one range scan).
	Window int
}

// Request is a page request: a limit, and an offset or a cursor (never
// both; an absent cursor is "").
type Request struct {
	Limit  int
	Offset int
	Cursor string
}

// MaxCursorChars bounds a cursor parameter; the cursors handed out are far
// shorter.
const MaxCursorChars = 1024

// Parse reads limit, page, offset and cursor from v. Every bad value is an
// invalid_request naming the parameter; cursor with page or offset is one
// too, and so is a page or offset past the window (with
// max_result_window). The cursor is returned as given, for the list to
// decode against its own query.
func Parse(v url.Values, b Bounds) (Request, error) {
	get := func(name string) string { return strings.TrimSpace(v.Get(name)) }
	r := Request{Limit: b.DefaultLimit}
	if s := get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if tooLarge(s, err) {
			n, err = b.MaxLimit, nil // a huge limit is still a limit above the maximum
		}
		if err != nil || n < 1 {
			return r, apperr.InvalidField("limit", "limit must be a whole number of at least 1, got %q", s)
		}
		r.Limit = min(n, b.MaxLimit)
	}
	page, offset, cursor := get("page"), get("offset"), get("cursor")
	switch {
	case cursor != "" && (page != "" || offset != ""):
		return r, apperr.InvalidField("cursor", "use cursor or page/offset, not both")
	case cursor != "":
		if len(cursor) > MaxCursorChars {
			return r, BadCursor()
		}
		r.Cursor = cursor
	case page != "" && offset != "":
		return r, apperr.InvalidField("page", "use page or offset, not both")
	case page != "":
		n, err := strconv.Atoi(page)
		if tooLarge(page, err) {
			return r, WindowError("page", b.Window)
		}
		if err != nil || n < 1 {
			return r, apperr.InvalidField("page", "page must be a whole number of at least 1, got %q", page)
		}
		// Bounded before multiplying so a huge page cannot overflow.
		if n > b.Window {
			return r, WindowError("page", b.Window)
		}
		r.Offset = (n - 1) * r.Limit
	case offset != "":
		n, err := strconv.Atoi(offset)
		if tooLarge(offset, err) {
			return r, WindowError("offset", b.Window)
		}
		if err != nil || n < 0 {
			return r, apperr.InvalidField("offset", "offset must be a whole number of at least 0, got %q", offset)
		}
		r.Offset = n
	}
	if r.Offset > b.Window-r.Limit {
		return r, WindowError("offset", b.Window)
	}
	return r, nil
}

// tooLarge reports a whole number too large for an int: still a number, so
// a limit is clamped and a page or offset is past the window, rather than
// "not a number".
func tooLarge(s string, err error) bool {
	return errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-")
}

// WindowError is the invalid_request of a page past the window.
func WindowError(field string, window int) *apperr.Error {
	return apperr.InvalidField(field, "results are paged up to the first %d (offset + limit); "+
		"use cursor (next_cursor) to go further, or narrow the filters", window).
		With("max_result_window", window)
}
