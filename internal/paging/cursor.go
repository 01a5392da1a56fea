package paging

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"broll/internal/apperr"
)

// A cursor is the position after the last row of a page: the sort key and
// id of that row, and what the list needs to refuse a cursor of another
// query (Cursor). It is base64url of JSON: opaque to clients, which only
// hand it back; nothing secret is in it, and a cursor edited by hand can
// only point at another position of the same list.

// EncodeCursor renders v (a Cursor, as Cursor.Encode gives it) as a cursor.
func EncodeCursor(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// The cursor structs are plain values; this is a programming error.
		panic("paging: cursor: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor made by EncodeCursor into v (ReadCursor
// reads a Cursor with its keys typed). Anything else
// (not base64url, not JSON of v's shape, unknown fields) is the
// invalid_request of BadCursor; the list then checks that the cursor
// belongs to the query it is given with.
func DecodeCursor(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return BadCursor()
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil || dec.More() {
		return BadCursor()
	}
	return nil
}

// BadCursor is the invalid_request of a cursor that is not one this list
// handed out for this query.
func BadCursor() *apperr.Error {
	return apperr.InvalidField("cursor", "cursor is not a next_cursor of this query; "+
		"pass next_cursor back unchanged, with the same filters and sort")
}
