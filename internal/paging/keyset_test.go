package paging

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/internal/apperr"
)

// The builder numbers its arguments in the order they are added, and the
// keyset predicate compares the sort keys and the id as one row, in the
// order's direction.
func TestBuilderAfter(t *testing.T) {
	b := &Builder{}
	b.Where("a.owner = " + b.Arg("x"))
	asc := Order{Keys: []string{"a.created_at"}, ID: "a.id"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	id := uuid.New()
	b.Where(asc.After(b, []any{at}, id))
	if got, want := b.And(), "a.owner = $1 AND (a.created_at, a.id) > ($2, $3)"; got != want {
		t.Errorf("ascending: %q, want %q", got, want)
	}
	if got, want := asc.By(), "a.created_at ASC, a.id ASC"; got != want {
		t.Errorf("order: %q, want %q", got, want)
	}
	if got, want := b.Limit(20), "$4"; got != want {
		t.Errorf("limit placeholder %q, want %q", got, want)
	}
	if args := b.Args(); len(args) != 4 || args[0] != "x" || args[1] != at || args[2] != id || args[3] != 21 {
		t.Errorf("arguments %v: the limit is one more than the page", args)
	}
	desc := Order{Keys: []string{"s", "p.at"}, ID: "p.id", Desc: true}
	c := &Builder{}
	if got, want := desc.After(c, []any{0.5, at}, id), "(s, p.at, p.id) < ($1, $2, $3)"; got != want {
		t.Errorf("descending: %q, want %q", got, want)
	}
	if got, want := desc.By(), "s DESC, p.at DESC, p.id DESC"; got != want {
		t.Errorf("order: %q, want %q", got, want)
	}
	// A clone takes its own arguments and conditions from there on.
	d := b.Clone()
	d.Where("x = " + d.Arg(1))
	d.Replace(0, "y = "+d.Arg(2))
	if b.Len() != 2 || len(b.Args()) != 4 || d.Len() != 3 || d.And() != "y = $6 AND (a.created_at, a.id) > ($2, $3) AND x = $5" {
		t.Errorf("clone shares state: %q / %q", b.And(), d.And())
	}
}

// Page cuts the extra row and gives the cursor of the page's last row.
func TestPage(t *testing.T) {
	cur := func(r int) Cursor { return Cursor{Keys: []any{int64(r)}} }
	rows, more, next := Page([]int{1, 2, 3}, 2, cur)
	if !slices.Equal(rows, []int{1, 2}) || !more || next == "" {
		t.Fatalf("%v %v %q", rows, more, next)
	}
	c, err := ReadCursor(next, "", KeyInt)
	if err != nil || c.Keys[0] != int64(2) {
		t.Fatalf("the cursor is not the last row's: %+v %v", c, err)
	}
	if rows, more, next := Page([]int{1, 2}, 2, cur); len(rows) != 2 || more || next != "" {
		t.Fatalf("a last page: %v %v %q", rows, more, next)
	}
}

// A cursor reads back with its keys typed as the list's sort keys, and only
// for the query it was made for.
func TestCursorKeys(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.FixedZone("x", 3600))
	id := uuid.New()
	c := Cursor{Query: Fingerprint("a", "b"), Keys: []any{at, int64(-7), int32(5), 0.1, float32(0.3), math.Inf(1)}, ID: id, N: 40}
	s := c.Encode()
	got, err := ReadCursor(s, Fingerprint("a", "b"), KeyTime, KeyInt, KeyInt, KeyFloat, KeyFloat32, KeyFloat)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{at.UTC(), int64(-7), int64(5), 0.1, float32(0.3), math.Inf(1)}
	if !slices.Equal(got.Keys, want) || got.ID != id || got.N != 40 {
		t.Fatalf("read back %+v, want keys %v", got, want)
	}
	if Fingerprint("a", "b") == Fingerprint("ab", "") || Fingerprint("a") == Fingerprint("a", "") {
		t.Error("fingerprints of different parts are equal")
	}
	nan := Cursor{Keys: []any{math.NaN()}}.Encode()
	bad := []struct {
		name  string
		s     string
		query string
		kinds []Kind
	}{
		{"another query", s, Fingerprint("a", "c"), []Kind{KeyTime, KeyInt, KeyInt, KeyFloat, KeyFloat32, KeyFloat}},
		{"fewer keys", s, Fingerprint("a", "b"), []Kind{KeyTime}},
		{"a key of another type", s, Fingerprint("a", "b"), []Kind{KeyInt, KeyInt, KeyInt, KeyFloat, KeyFloat32, KeyFloat}},
		{"not a number", nan, "", []Kind{KeyFloat}},
		{"too many rows", Cursor{Keys: []any{int64(1)}, N: MaxCursorRows + 1}.Encode(), "", []Kind{KeyInt}},
		{"negative rows", Cursor{Keys: []any{int64(1)}, N: -1}.Encode(), "", []Kind{KeyInt}},
		{"a number where text goes", EncodeCursor(map[string]any{"q": "", "k": []any{1}}), "", []Kind{KeyInt}},
		{"not a cursor", "!!", "", []Kind{KeyInt}},
	}
	for _, tc := range bad {
		_, err := ReadCursor(tc.s, tc.query, tc.kinds...)
		if e, ok := apperr.As(err); !ok || e.Code != apperr.Invalid || e.Field != "cursor" {
			t.Errorf("%s: %v, want invalid_request on cursor", tc.name, err)
		}
	}
}

// A cursor of the shapes the lists handed out before they shared Cursor
// (their own fields) is refused like any cursor not made here: a 400 on
// cursor, never a position read wrong.
func TestCursorOfAnotherShapeRefused(t *testing.T) {
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for _, old := range []map[string]any{
		{"q": "", "t": at, "i": uuid.New()},
		{"q": "", "t": at, "i": uuid.New(), "n": 3},
		{"s": "created_at", "o": "desc", "q": "", "k": at, "i": uuid.New(), "n": 3},
	} {
		if _, err := ReadCursor(EncodeCursor(old), "", KeyTime); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("%v: %v, want invalid_request", old, err)
		}
	}
}

// Whatever a client sends as a cursor, ReadCursor refuses it as a 400 on
// cursor or reads a position that encodes back to a cursor reading the same.
func FuzzReadCursor(f *testing.F) {
	f.Add(Cursor{Query: "q", Keys: []any{time.Now()}, ID: uuid.New(), N: 3}.Encode())
	f.Add(Cursor{Keys: []any{0.25}}.Encode())
	f.Add("e30")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ReadCursor(s, "q", KeyTime)
		if err != nil {
			if e, ok := apperr.As(err); !ok || e.Code != apperr.Invalid || e.Field != "cursor" {
				t.Fatalf("%q: %v, want invalid_request on cursor", s, err)
			}
			return
		}
		again, err := ReadCursor(c.Encode(), "q", KeyTime)
		if err != nil || !again.Keys[0].(time.Time).Equal(c.Keys[0].(time.Time)) || again.ID != c.ID || again.N != c.N {
			t.Fatalf("%q read as %+v, again as %+v %v", s, c, again, err)
		}
	})
}
