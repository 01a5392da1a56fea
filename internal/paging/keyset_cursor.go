package paging

import (
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Cursor is the one cursor of every keyset list: the position after a row
// (its sort key values and its id), how many rows came before the page
// after it (the offset that page reports), and a fingerprint of the query
// that handed it out, so that a cursor of another query is refused instead
// of continuing the wrong list. It travels as base64url of JSON
// (EncodeCursor), each key as text: a time keeps its microseconds, a float
// reads back as the very same number (and +Inf, a key past the end of an
// order, is one), which JSON numbers do not promise.
type Cursor struct {
	Query string    `json:"q"`
	Keys  []any     `json:"k"`
	ID    uuid.UUID `json:"i"`
	N     int       `json:"n,omitempty"`
}

// Kind is the type a sort key is read back as, the one its SQL has, so that
// the key compares in the keyset condition as the row's own value does.
type Kind int

// The kinds of sort keys: a timestamp (time.Time), a whole number (int64),
// a float8 (float64) and a real (float32, as ts_rank gives).
const (
	KeyTime Kind = iota
	KeyInt
	KeyFloat
	KeyFloat32
)

// MaxCursorRows bounds the row count a cursor carries (it only reports an
// offset); a larger one was not made here.
const MaxCursorRows = 1 << 40

// Fingerprint identifies a query by its parts (filters, sort, search
// texts): equal parts, equal fingerprints.
func Fingerprint(parts ...string) string {
	h := fnv.New64a()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// Encode renders c as the next_cursor a page hands out.
func (c Cursor) Encode() string {
	keys := make([]any, len(c.Keys))
	for i, k := range c.Keys {
		keys[i] = keyText(k)
	}
	c.Keys = keys
	return EncodeCursor(c)
}

// keyText is a sort key as it travels.
func keyText(k any) any {
	switch k := k.(type) {
	case time.Time:
		return k.UTC().Format(time.RFC3339Nano)
	case float64:
		return strconv.FormatFloat(k, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(k), 'g', -1, 32)
	case int64:
		return strconv.FormatInt(k, 10)
	case int32:
		return strconv.FormatInt(int64(k), 10)
	case int:
		return strconv.Itoa(k)
	}
	return k
}

// ReadCursor reads s, a cursor Encode made for the query whose fingerprint
// is query, over sort keys of the kinds given; its keys come back typed.
// Anything else (another query's, another number or type of keys, a row
// count out of bounds, not a cursor at all) is BadCursor.
func ReadCursor(s, query string, kinds ...Kind) (Cursor, error) {
	var c Cursor
	if err := DecodeCursor(s, &c); err != nil {
		return Cursor{}, err
	}
	if c.Query != query || len(c.Keys) != len(kinds) || c.N < 0 || c.N > MaxCursorRows {
		return Cursor{}, BadCursor()
	}
	for i, kind := range kinds {
		text, ok := c.Keys[i].(string)
		if !ok {
			return Cursor{}, BadCursor()
		}
		k, err := readKey(text, kind)
		if err != nil {
			return Cursor{}, BadCursor()
		}
		c.Keys[i] = k
	}
	return c, nil
}

func readKey(s string, kind Kind) (any, error) {
	switch kind {
	case KeyTime:
		return time.Parse(time.RFC3339Nano, s)
	case KeyInt:
		return strconv.ParseInt(s, 10, 64)
	}
	bits := 64
	if kind == KeyFloat32 {
		bits = 32
	}
	f, err := strconv.ParseFloat(s, bits)
	if err == nil && math.IsNaN(f) {
		err = strconv.ErrSyntax
	}
	if kind == KeyFloat32 {
		return float32(f), err
	}
	return f, err
}
