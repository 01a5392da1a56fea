// Package paging reads the paging parameters every list endpoint shares
// (limit, page or offset, cursor) with the same defaults, bounds and
// messages, and encodes the opaque keyset cursors they hand out.
package paging

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"

	"broll/internal/apperr"
)

// Bounds are one list's paging limits. Each domain list exports its own,
// and the adapters read a request's paging against them.
type Bounds struct {
	// DefaultLimit applies when limit is absent; a limit above MaxLimit is
	// clamped to it.
	DefaultLimit, MaxLimit int
	// Window bounds offset+limit: a deep OFFSET costs a scan of everything
	// it skips. A cursor is not bounded by it (it costs one range scan).
	Window int
	// NoOffset: the list pages by cursor only; page and offset are not read.
	// NoCursor: it pages by page or offset only; cursor is not read.
	NoOffset, NoCursor bool
}

// Request is a page request: a limit, and an offset or a cursor (never
// both; an absent cursor is "").
type Request struct {
	Limit  int
	Offset int
	Cursor string
}

// Ask is a page as a caller asked for it, already typed (an MCP tool's
// arguments): nil for an absent number, "" for no cursor.
type Ask struct {
	Limit, Page, Offset *int
	Cursor              string
}

// MaxCursorChars bounds a cursor parameter; the cursors handed out are far
// shorter.
const MaxCursorChars = 1024

// Parse reads limit, page, offset and cursor from v (those b reads) and
// checks them with Check. A value that is not a whole number is an
// invalid_request naming the parameter and quoting it; one too large for an
// int is still a number (a limit is clamped, a page or offset is past the
// window). The cursor is returned as given, for the list to decode against
// its own query.
func Parse(v url.Values, b Bounds) (Request, error) {
	a := Ask{Cursor: v.Get("cursor")}
	for _, p := range []struct {
		name string
		dst  **int
		bad  func(string) error
	}{{"limit", &a.Limit, badLimit}, {"page", &a.Page, badPage}, {"offset", &a.Offset, badOffset}} {
		if b.NoOffset && p.name != "limit" {
			continue
		}
		s := strings.TrimSpace(v.Get(p.name))
		n, ok := number(s)
		if !ok {
			return Request{Limit: b.DefaultLimit}, p.bad(s)
		}
		*p.dst = n
	}
	return b.Check(a)
}

// Check applies b to a typed request: the default limit, the clamp, the
// window, and cursor with page or offset refused. Every bad value is an
// invalid_request naming the parameter, with the message Parse gives for
// the same value as text.
func (b Bounds) Check(a Ask) (Request, error) {
	r := Request{Limit: b.DefaultLimit}
	a.Cursor = strings.TrimSpace(a.Cursor)
	if b.NoCursor {
		a.Cursor = ""
	}
	if b.NoOffset {
		a.Page, a.Offset = nil, nil
	}
	if a.Limit != nil {
		if *a.Limit < 1 {
			return r, badLimit(strconv.Itoa(*a.Limit))
		}
		r.Limit = min(*a.Limit, b.MaxLimit)
	}
	if err := a.conflict(); err != nil {
		return r, err
	}
	switch {
	case a.Cursor != "":
		if len(a.Cursor) > MaxCursorChars {
			return r, BadCursor()
		}
		r.Cursor = a.Cursor
	case a.Page != nil:
		n := *a.Page
		if n < 1 {
			return r, badPage(strconv.Itoa(n))
		}
		// Bounded before multiplying so a huge page cannot overflow.
		if n > b.Window {
			return r, WindowError("page", b.Window)
		}
		r.Offset = (n - 1) * r.Limit
	case a.Offset != nil:
		if *a.Offset < 0 {
			return r, badOffset(strconv.Itoa(*a.Offset))
		}
		r.Offset = *a.Offset
	}
	if r.Offset > b.Window-r.Limit {
		return r, WindowError("offset", b.Window)
	}
	return r, nil
}

// Apply checks a Request as the list receives it, against the list's own
// bounds: one Parse or Check made is returned unchanged, and one built by
// hand is held to the same rules (a zero limit is the default one).
func (b Bounds) Apply(r Request) (Request, error) {
	a := Ask{Cursor: r.Cursor}
	if r.Limit != 0 {
		a.Limit = &r.Limit
	}
	if r.Offset != 0 {
		a.Offset = &r.Offset
	}
	return b.Check(a)
}

// conflict refuses cursor with page or offset, and page with offset.
func (a Ask) conflict() error {
	switch {
	case a.Cursor != "" && (a.Page != nil || a.Offset != nil):
		return apperr.InvalidField("cursor", "use cursor or page/offset, not both")
	case a.Page != nil && a.Offset != nil:
		return apperr.InvalidField("page", "use page or offset, not both")
	}
	return nil
}

// number reads a whole number: nil when s is empty, false when s is not a
// whole number. One too large for an int reads as the largest int, past
// every bound, so that it is clamped or refused as out of range rather
// than as "not a number".
func number(s string) (*int, bool) {
	if s == "" {
		return nil, true
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
		n, err = math.MaxInt, nil
	}
	if err != nil {
		return nil, false
	}
	return &n, true
}

func badLimit(s string) error {
	return apperr.InvalidField("limit", "limit must be a whole number of at least 1, got %q", apperr.Clip(s))
}

func badPage(s string) error {
	return apperr.InvalidField("page", "page must be a whole number of at least 1, got %q", apperr.Clip(s))
}

func badOffset(s string) error {
	return apperr.InvalidField("offset", "offset must be a whole number of at least 0, got %q", apperr.Clip(s))
}

// WindowError is the invalid_request of a page past the window.
func WindowError(field string, window int) *apperr.Error {
	return apperr.InvalidField(field, "results are paged up to the first %d (offset + limit); "+
		"use cursor (next_cursor) to go further, or narrow the filters", window).
		With("max_result_window", window)
}
