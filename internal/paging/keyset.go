package paging

import (
	"slices"
	"strconv"
	"strings"
)

// Builder assembles a keyset listing's SQL: its conditions, each holding
// its values as numbered arguments ($n, in the order they are added), and
// the arguments to run the statement with. The SQL text is only what the
// list writes itself; a value never is.
type Builder struct {
	args  []any
	conds []string
}

// Arg adds a value and returns its placeholder.
func (b *Builder) Arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// Where adds conditions, all of which a row must meet.
func (b *Builder) Where(conds ...string) { b.conds = append(b.conds, conds...) }

// And is the conditions joined, for a WHERE or a JOIN's ON.
func (b *Builder) And() string { return strings.Join(b.conds, " AND ") }

// AndOf is the conditions from the i-th up to (not including) the j-th,
// joined as And joins them all ("" when there are none).
func (b *Builder) AndOf(i, j int) string { return strings.Join(b.conds[i:j], " AND ") }

// Args are the statement's arguments, in placeholder order.
func (b *Builder) Args() []any { return b.args }

// Len is how many conditions there are.
func (b *Builder) Len() int { return len(b.conds) }

// Replace puts cond in place of the i-th condition.
func (b *Builder) Replace(i int, cond string) { b.conds[i] = cond }

// Clone is a copy that adds its own conditions and arguments from here on.
func (b *Builder) Clone() *Builder {
	return &Builder{args: slices.Clone(b.args), conds: slices.Clone(b.conds)}
}

// Limit is the placeholder of a page of n rows read as n+1: the extra row
// says, exactly, whether another page follows (Page cuts it).
func (b *Builder) Limit(n int) string { return b.Arg(n + 1) }

// Order is a keyset listing's order: its sort keys (SQL expressions, most
// significant first), then the row's id, all in one direction, so that one
// index on (keys..., id) yields it and a cursor names one place in it.
type Order struct {
	Keys []string
	ID   string
	Desc bool
}

// By is the ORDER BY list.
func (o Order) By() string {
	dir := " ASC"
	if o.Desc {
		dir = " DESC"
	}
	parts := make([]string, 0, len(o.Keys)+1)
	for _, k := range append(slices.Clone(o.Keys), o.ID) {
		parts = append(parts, k+dir)
	}
	return strings.Join(parts, ", ")
}

// After is the keyset condition of the rows after the one whose sort keys
// are keys and id is id (a cursor's), as one row comparison: the order is
// lexicographic, which is what Postgres compares rows by, and an index on
// (keys..., id) serves it as one range scan.
func (o Order) After(b *Builder, keys []any, id any) string {
	vals := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		vals = append(vals, b.Arg(k))
	}
	vals = append(vals, b.Arg(id))
	cmp := ") > ("
	if o.Desc {
		cmp = ") < ("
	}
	return "(" + strings.Join(append(slices.Clone(o.Keys), o.ID), ", ") + cmp + strings.Join(vals, ", ") + ")"
}

// Page cuts rows read with Limit(n) to the page of n. When a row was left
// over, more is true and next is the cursor of the page's last row
// (cursor's, encoded); otherwise the page is the last one and next is "".
func Page[T any](rows []T, n int, cursor func(last T) Cursor) (page []T, more bool, next string) {
	if len(rows) <= n {
		return rows, false, ""
	}
	rows = rows[:n]
	return rows, true, cursor(rows[n-1]).Encode()
}
